import { epochMs, index, json, table, text } from '../db/columns'

/** What one field was and became; a secret field never appears, only that it changed. */
export type FieldChanges = Record<string, { from?: unknown; to?: unknown }>

/**
 * The audit log: one row per mutating action on a workspace, by a member or a machine key,
 * written by `core.audit()` in the transaction of the change it records (DESIGN "Audit log").
 */
export const auditLog = table(
  'audit_log',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    at: epochMs('at').notNull(),
    /** `user:<account id>` or `key:<key id>`. */
    actor: text('actor').notNull(),
    /** `<resource>.<verb>`, e.g. `app.created`, `machine_key.revoked`. */
    action: text('action').notNull(),
    targetType: text('target_type').notNull(),
    targetId: text('target_id').notNull(),
    ip: text('ip'),
    userAgent: text('user_agent'),
    changes: json<FieldChanges>('changes').notNull(),
  },
  (t) => [
    // The log reads newest first, by workspace; the id breaks ties within a millisecond.
    index('audit_log_workspace_at_idx').on(t.workspaceId, t.at, t.id),
  ],
)
