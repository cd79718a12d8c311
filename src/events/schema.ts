import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'

/** The events outbox: every domain event, written by `emit()` in the caller's transaction. */
export const events = sqliteTable(
  'events',
  {
    id: text('id').primaryKey(),
    type: text('type').notNull(),
    workspaceId: text('workspace_id').notNull(),
    tenantId: text('tenant_id'),
    data: text('data', { mode: 'json' }).notNull().$type<Record<string, unknown>>(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [index('events_workspace_idx').on(t.workspaceId, t.createdAt)],
)
