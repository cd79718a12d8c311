import { and, count, desc, eq, gte, lt, or, type SQL, sql } from 'drizzle-orm'
import { auditLog } from '../../audit/schema'
import type { Core } from '../../core'
import { findAccounts, PLATFORM } from '../../identity'
import { isoTime } from '../../shared/clock'
import { appError, type ErrorCode } from '../../shared/errors'
import { AuditErrors } from './errors'
import type { AuditModel } from './model'
import { parseTimestamp } from './timestamps'

export const DEFAULT_LIMIT = 50
export const MAX_LIMIT = 200
/** The CSV export reads this many entries per query… */
const EXPORT_CHUNK = 500
/** …and stops after this many (the newest ones), whatever matched. */
export const EXPORT_CAP = 100_000

type Row = typeof auditLog.$inferSelect

/** The filters as a person or a client sends them (every one optional). */
export interface AuditFilters {
  actor?: string
  action?: string
  since?: string
  until?: string
}

/** Where a page ends: the last entry's (at, id), the list's order. */
interface Position {
  at: number
  id: string
}

const itemOut = (r: Row): AuditModel.Item => ({
  id: r.id,
  at: isoTime(r.at),
  actor: r.actor,
  action: r.action,
  target: { type: r.targetType, id: r.targetId },
  ip: r.ip,
  user_agent: r.userAgent,
  changes: r.changes,
})

const ACTOR = /^(user|key):[A-Za-z0-9_-]{1,64}$/
// `app.created`, or a prefix with a trailing `.*` (`app.*`, `member.invitation.*`).
const ACTION = /^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*(\.\*)?$/
const ID = /^aud_[0-9A-HJKMNP-TV-Z]{26}$/

const invalid = (code: ErrorCode, field: string) => appError(code, 422, { loc: ['query', field] })

// The cursor is the last entry's (at, id), opaque to clients (base64url of `<at>.<id>`).
const encodeCursor = (p: Position) => Buffer.from(`${p.at}.${p.id}`, 'utf8').toString('base64url')
function decodeCursor(cursor: string): Position {
  const [at, id, ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split('.')
  const position = { at: Number(at), id: id ?? '' }
  if (
    rest.length > 0 ||
    !/^-?\d{1,16}$/.test(at ?? '') ||
    !ID.test(position.id) ||
    encodeCursor(position) !== cursor
  )
    throw invalid(AuditErrors.CURSOR_INVALID, 'cursor')
  return position
}

function timestamp(text: string | undefined, field: 'since' | 'until'): number | undefined {
  if (!text) return undefined
  const ms = parseTimestamp(text)
  if (ms === null) throw invalid(AuditErrors.TIME_INVALID, field)
  return ms
}

/**
 * The filters as conditions on a workspace's entries; a filter that is not well formed answers 422
 * at its field. An empty value filters nothing (what an empty field of the dashboard's form sends).
 */
function conditions(workspaceId: string, f: AuditFilters): SQL[] {
  const where: SQL[] = [eq(auditLog.workspaceId, workspaceId)]
  const actor = f.actor?.trim()
  if (actor) {
    if (!ACTOR.test(actor)) throw invalid(AuditErrors.ACTOR_INVALID, 'actor')
    where.push(eq(auditLog.actor, actor))
  }
  const action = f.action?.trim()
  if (action) {
    if (!ACTION.test(action)) throw invalid(AuditErrors.ACTION_INVALID, 'action')
    if (action.endsWith('.*')) {
      // A prefix compared as a prefix, not with LIKE, where `_` is a wildcard. Its length is a
      // number the pattern above bounds, written into the statement (a bound parameter would need
      // a type PostgreSQL cannot infer here).
      const prefix = action.slice(0, -1)
      where.push(sql`substr(${auditLog.action}, 1, ${sql.raw(String(prefix.length))}) = ${prefix}`)
    } else where.push(eq(auditLog.action, action))
  }
  const since = timestamp(f.since?.trim(), 'since')
  if (since !== undefined) where.push(gte(auditLog.at, since))
  const until = timestamp(f.until?.trim(), 'until')
  if (until !== undefined) where.push(lt(auditLog.at, until))
  return where
}

/** Entries older than `p` in the list's order (at desc, id desc): exact under ties in `at`. */
const olderThan = (p: Position) =>
  or(lt(auditLog.at, p.at), and(eq(auditLog.at, p.at), lt(auditLog.id, p.id)))!

/**
 * A workspace's audit log, read: newest first, filtered, paged by an opaque cursor, and exported as
 * CSV in chunks. The entries are written by `core.audit` in the features' own transactions.
 */
export function createAuditLogService(core: Core) {
  const select = (where: SQL[], after: Position | null, limit: number) =>
    core.db
      .select()
      .from(auditLog)
      .where(and(...where, ...(after ? [olderThan(after)] : [])))
      .orderBy(desc(auditLog.at), desc(auditLog.id))
      .limit(limit)

  const total = async (where: SQL[]) => {
    const [row] = await core.db
      .select({ n: count() })
      .from(auditLog)
      .where(and(...where))
    return Number(row?.n ?? 0)
  }

  return {
    /** One page: `limit` entries (1..200, 50) after `cursor`, the total matching, and the next cursor. */
    async list(
      workspaceId: string,
      query: AuditFilters & { limit?: number; cursor?: string },
    ): Promise<AuditModel.List> {
      const limit = query.limit ?? DEFAULT_LIMIT
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
        throw invalid(AuditErrors.LIMIT_INVALID, 'limit')
      const where = conditions(workspaceId, query)
      const after = query.cursor ? decodeCursor(query.cursor) : null
      // One more than asked tells whether another page follows.
      const rows = await select(where, after, limit + 1)
      const page = rows.slice(0, limit)
      const last = page.at(-1)
      return {
        items: page.map(itemOut),
        total: await total(where),
        next_cursor: rows.length > limit && last ? encodeCursor(last) : null,
      }
    },

    /**
     * Every entry matching the filters, newest first, in chunks of EXPORT_CHUNK, at most EXPORT_CAP.
     * The filters are checked here (422) before the first chunk is read, so before a byte is sent.
     */
    export(workspaceId: string, filters: AuditFilters) {
      const where = conditions(workspaceId, filters)
      async function* chunks(): AsyncGenerator<AuditModel.Item[]> {
        let after: Position | null = null
        for (let left = EXPORT_CAP; left > 0; ) {
          const rows = await select(where, after, Math.min(EXPORT_CHUNK, left))
          if (rows.length > 0) yield rows.map(itemOut)
          const last = rows.at(-1)
          if (!last || rows.length < EXPORT_CHUNK) return
          left -= rows.length
          after = last
        }
      }
      return { total: () => total(where), chunks }
    },

    /** How the dashboard names each actor: a member's name or email; a key (or an account gone) by its id. */
    async actorNames(actors: readonly string[]): Promise<Map<string, string>> {
      const ids = [...new Set(actors.flatMap((a) => (a.startsWith('user:') ? [a.slice(5)] : [])))]
      const accounts = await findAccounts(core, PLATFORM, ids)
      return new Map(accounts.map((a) => [`user:${a.id}`, a.name || a.email]))
    },

    /**
     * What the dashboard's filters offer: every actor and every action the workspace's log holds
     * (a member who never acted has nothing to find), sorted. One pass over the workspace's index.
     */
    async filterChoices(workspaceId: string): Promise<{ actors: string[]; actions: string[] }> {
      const rows = await core.db
        .selectDistinct({ actor: auditLog.actor, action: auditLog.action })
        .from(auditLog)
        .where(eq(auditLog.workspaceId, workspaceId))
      const sorted = (values: string[]) => [...new Set(values)].sort()
      return { actors: sorted(rows.map((r) => r.actor)), actions: sorted(rows.map((r) => r.action)) }
    },
  }
}

export type AuditLogService = ReturnType<typeof createAuditLogService>
