import { sql } from 'drizzle-orm'
import { boolean, epochMs, index, integer, table, text, uniqueIndex } from '../../db/columns'
import type { SmtpSecurity } from '../../shared/smtp'

/**
 * A workspace's own SMTP servers (DESIGN "SMTP"), one active at a time. The platform default
 * (SMTP_URL, or the dev outbox) is never a row: it is in effect while no row is active. A change
 * goes in steps (SPEC "SMTP rules"): a new row, then it becomes the active one, then the rows it
 * replaces go; a change stopped midway leaves at most extra inactive rows, never none active
 * that was. The password is sealed under the row's id; the delivery outcome is kept for the
 * dashboard.
 */
export const smtpProviders = table(
  'smtp_providers',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    host: text('host').notNull(),
    port: integer('port').notNull(),
    username: text('username'),
    passwordSealed: text('password_sealed'),
    security: text('security').$type<SmtpSecurity>().notNull(),
    fromAddress: text('from_address').notNull(),
    fromName: text('from_name'),
    active: boolean('active').notNull(),
    createdAt: epochMs('created_at').notNull(),
    /** The last mail this server accepted, and the last it did not (with what went wrong). */
    lastSuccessAt: epochMs('last_success_at'),
    lastErrorAt: epochMs('last_error_at'),
    lastError: text('last_error'),
  },
  (t) => [
    index('smtp_providers_workspace_idx').on(t.workspaceId),
    // One active provider per workspace, whatever runs at once.
    uniqueIndex('smtp_providers_active_idx').on(t.workspaceId).where(sql`${t.active}`),
  ],
)
