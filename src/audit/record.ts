import { eq } from 'drizzle-orm'
import type { Actor } from '../access/model'
import type { Conn } from '../db/store'
import type { Clock } from '../shared/clock'
import { newId } from '../shared/ids'
import { auditLog, type FieldChanges } from './schema'

export type { FieldChanges } from './schema'

/** One mutating action, as a service describes it; who and from where come from the guard's `actor`. */
export interface AuditEntry {
  workspaceId: string
  actor: Actor
  action: string
  target: { type: string; id: string }
  changes?: FieldChanges
}

/**
 * The one way a service records what was done (`core.audit`): a row in `audit_log`, in the
 * transaction of the change (`tx`), so an entry exists exactly when the change does. `many` writes
 * a batch's entries in one statement.
 */
export interface Audit {
  (entry: AuditEntry, opts: { tx: Conn }): Promise<string>
  many(entries: AuditEntry[], opts: { tx: Conn }): Promise<string[]>
}

export function createAudit(clock: Clock): Audit {
  const many: Audit['many'] = async (entries, { tx }) => {
    if (!entries.length) return []
    const at = clock.now()
    const rows = entries.map(({ workspaceId, actor, action, target, changes = {} }) => ({
      id: newId('aud', at),
      workspaceId,
      at,
      actor: actor.id,
      action,
      targetType: target.type,
      targetId: target.id,
      ip: actor.ip,
      userAgent: actor.userAgent,
      changes,
    }))
    await tx.db.insert(auditLog).values(rows)
    return rows.map((r) => r.id)
  }
  const audit = async (entry: AuditEntry, opts: { tx: Conn }) => {
    const [id] = await many([entry], opts)
    return id!
  }
  return Object.assign(audit, { many })
}

/**
 * The fields of `fields` whose value differs between `before` and `after`, with both values; a
 * field named in `secret` shows only that it changed. What a service passes as `changes`.
 */
export function fieldChanges<T extends Record<string, unknown>>(
  before: Partial<T> | null,
  after: Partial<T> | null,
  fields: readonly (keyof T & string)[],
  secret: readonly (keyof T & string)[] = [],
): FieldChanges {
  const out: FieldChanges = {}
  for (const field of fields) {
    const from = before?.[field]
    const to = after?.[field]
    if (JSON.stringify(from) === JSON.stringify(to)) continue
    out[field] = secret.includes(field) ? { to: '(changed)' } : { from, to }
  }
  return out
}

/** The audit log's share of a workspace teardown. */
export async function deleteWorkspaceAudit(core: { db: Conn['db'] }, workspaceId: string): Promise<void> {
  await core.db.delete(auditLog).where(eq(auditLog.workspaceId, workspaceId))
}
