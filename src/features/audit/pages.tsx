import { Elysia, t } from 'elysia'
import type { AuthPlugin } from '../../access/guard'
import type { Core } from '../../core'
import { AppError } from '../../shared/errors'
import { type SidebarLink, WorkspacePage } from '../../shared/views/components'
import { html, shellUser } from '../../shared/views/respond'
import { createMachineKeyService } from '../machine-keys/service'
import type { Workspace } from '../workspaces/service'
import { AuditModel } from './model'
import { type AuditFilters, createAuditLogService } from './service'
import { AuditFilterForm, AuditResults, type FilterChoices } from './views'

const views = { detail: { tags: ['views'] } }

/** The page's query: the API's filters, and the cursor of "Older entries". */
const pageQuery = t.Object({
  ...AuditModel.filters,
  cursor: t.Optional(t.String({ maxLength: 200 })),
})

const EMPTY_PAGE: AuditModel.List = { items: [], total: 0, next_cursor: null }

/** Settings → Audit log: the entries, filtered and paged, and their CSV download. */
export function auditLogPages(core: Core, auth: AuthPlugin<Workspace>, sidebar: SidebarLink[]) {
  const service = createAuditLogService(core)
  const keys = createMachineKeyService(core)

  /** The entries for the query; a refused filter shows as a message above an empty table (422). */
  async function results(w: Workspace, filters: AuditFilters, cursor?: string) {
    try {
      const page = await service.list(w.id, { ...filters, cursor })
      const names = await service.actorNames(page.items.map((i) => i.actor))
      const body = (
        <AuditResults workspaceId={w.id} filters={filters} page={page} names={names} cursor={cursor} />
      )
      return { body, status: 200 }
    } catch (e) {
      if (!(e instanceof AppError) || e.status !== 422) throw e
      const field = String(e.loc[1] ?? '')
      const label = field ? `${field[0]!.toUpperCase()}${field.slice(1)}: ` : ''
      const body = (
        <AuditResults
          workspaceId={w.id}
          filters={filters}
          page={EMPTY_PAGE}
          names={new Map()}
          error={`${label}${e.message}.`}
        />
      )
      return { body, status: 422 }
    }
  }

  /** The filters' choices: the log's actors by name (a member's, a key's) and its actions. */
  async function filterChoices(w: Workspace): Promise<FilterChoices> {
    const { actors, actions } = await service.filterChoices(w.id)
    const names = await service.actorNames(actors)
    for (const key of await keys.list(w)) names.set(`key:${key.id}`, `${key.name} (machine key)`)
    return { actors: actors.map((value) => ({ value, label: names.get(value) ?? value })), actions }
  }

  return new Elysia({ name: 'audit-log-pages' }).use(auth).get(
    '/app/workspaces/:workspace_id/settings/audit-log',
    async ({ principal, workspace: w, query, request }) => {
      const { cursor, ...filters } = query
      const { body, status } = await results(w, filters, cursor)
      // A filter or a page link asks for the entries alone; a history restore wants the page.
      const fragment =
        request.headers.get('hx-target') === 'audit-log' &&
        request.headers.get('hx-history-restore-request') !== 'true'
      if (fragment) return html(body, status)
      return html(
        <WorkspacePage
          nav={sidebar}
          here="settings/audit-log"
          w={w}
          user={shellUser(principal)}
          heading="Audit log"
          title="audit log"
          lead={
            <>
              Every change to this workspace, who made it and from where, newest first. Entries are kept until
              the workspace is deleted.
            </>
          }
        >
          <div class="panel">
            <AuditFilterForm workspaceId={w.id} filters={filters} choices={await filterChoices(w)} />
          </div>
          <div class="panel">{body}</div>
        </WorkspacePage>,
        status,
      )
    },
    { params: AuditModel.params, query: pageQuery, scope: 'workspace:admin', ...views },
  )
}
