import { epochMs, index, table, text } from '../../db/columns'

/**
 * Mail that would have been sent had SMTP been configured: a local install keeps working (the
 * verification and reset links are readable at /dev/outbox) without a mail server.
 */
export const devOutbox = table(
  'dev_outbox',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id'),
    to: text('to').notNull(),
    subject: text('subject').notNull(),
    text: text('text').notNull(),
    html: text('html'),
    createdAt: epochMs('created_at').notNull(),
  },
  (t) => [index('dev_outbox_created_idx').on(t.createdAt)],
)
