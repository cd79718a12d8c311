import { Elysia } from 'elysia'
import type { AuthPlugin } from '../../access/guard'
import type { Core } from '../../core'
import type { Workspace } from '../workspaces/service'
import { CSV_HEADER, csvRecord, itemRecord } from './csv'
import { AuditModel } from './model'
import { type AuditFilters, type AuditLogService, createAuditLogService, EXPORT_CAP } from './service'

const tags = ['audit-log']

/**
 * The CSV export as a download: a header row, then every matching entry, newest first, read from
 * the store a chunk at a time as the client takes them (never the whole log in memory).
 */
async function csvDownload(service: AuditLogService, workspaceId: string, filters: AuditFilters) {
  const { total, chunks } = service.export(workspaceId, filters)
  const matching = await total()
  const source = chunks()
  const encoder = new TextEncoder()
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(csvRecord(CSV_HEADER)))
    },
    async pull(controller) {
      const next = await source.next()
      if (next.done) controller.close()
      else controller.enqueue(encoder.encode(next.value.map(itemRecord).join('')))
    },
    async cancel() {
      await source.return(undefined)
    },
  })
  return new Response(body, {
    headers: {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="audit-log-${workspaceId}.csv"`,
      'cache-control': 'no-store',
      // What matched, so a client can tell an export cut at the cap from a complete one.
      'x-total-count': String(matching),
    },
  })
}

/** DESIGN "Audit log": who did what to a workspace, for its administrators. */
export function auditLogRoutes(core: Core, auth: AuthPlugin<Workspace>) {
  const service = createAuditLogService(core)
  return new Elysia({ name: 'audit-log-routes', prefix: '/v1/workspaces/:workspace_id/audit-log' })
    .use(auth)
    .get(
      '/',
      async ({ workspace, query }) => {
        const { format, limit, cursor, ...filters } = query
        // A download rather than the JSON the route declares: Elysia checks no Response against it,
        // and `never` keeps the handler's type that of the JSON answer.
        if (format === 'csv') return (await csvDownload(service, workspace.id, filters)) as never
        return service.list(workspace.id, { ...filters, limit, cursor })
      },
      {
        params: AuditModel.params,
        query: AuditModel.listQuery,
        scope: 'workspace:admin',
        response: AuditModel.list,
        detail: {
          tags,
          summary: "List the workspace's audit log, newest first (filters, cursor pages, CSV export)",
          description:
            'One entry per mutating action, by a member (`user:<account id>`) or a machine key ' +
            '(`key:<key id>`), written in the same transaction as the change; never a secret. ' +
            'Filters combine: `actor` matches exactly, `action` exactly or, ending in `.*`, by prefix ' +
            '(`app.*`), `since` (inclusive) and `until` (exclusive) are ISO 8601 timestamps. A filter ' +
            'that is not well formed, a `limit` outside 1..200 or a cursor this list did not hand out ' +
            'answers 422. Pages follow `next_cursor` (null on the last); entries of the same millisecond ' +
            'are ordered by id, so a walk through the pages sees each entry once.\n\n' +
            '`format=csv` answers `text/csv; charset=utf-8` as an attachment (`audit-log-<workspace id>.csv`): ' +
            `a header row \`${CSV_HEADER.join(',')}\`, then every matching entry (not paged; \`limit\` and ` +
            `\`cursor\` are ignored), newest first, at most ${EXPORT_CAP.toLocaleString('en')} (the newest); ` +
            '`X-Total-Count` says how many matched. Fields are quoted as RFC 4180 says, `changes` is JSON ' +
            'text, and a field starting with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading ' +
            "`'` so that no spreadsheet runs it as a formula.",
        },
      },
    )
}
