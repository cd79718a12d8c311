import { epochMs, index, json, table, text } from '../db/columns'

/** The events outbox: every domain event, written by `emit()` in the caller's transaction. */
export const events = table(
  'events',
  {
    id: text('id').primaryKey(),
    type: text('type').notNull(),
    workspaceId: text('workspace_id').notNull(),
    tenantId: text('tenant_id'),
    data: json<Record<string, unknown>>('data').notNull(),
    createdAt: epochMs('created_at').notNull(),
  },
  (t) => [index('events_workspace_idx').on(t.workspaceId, t.createdAt)],
)
