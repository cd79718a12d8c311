import { count, desc, eq } from 'drizzle-orm'
import type { Core } from '../../core'
import { deleteInBatches } from '../../db/batch-delete'
import { newId } from '../../shared/ids'
import { devOutbox } from './schema'
import type { MailMessage } from './service'

/** A mail of the dev outbox, its text and html opened. */
export type DevMail = typeof devOutbox.$inferSelect

/** The longest lifetime of a mailed link (email verification): the outbox keeps nothing older. */
const DEV_OUTBOX_TTL_MS = 24 * 3600_000

// Bound to the row, so a sealed text cannot be moved to another mail unnoticed.
const outboxContext = (id: string) => `dev-outbox:${id}`

/**
 * Drops mails past their links' lifetime, and any kept in clear by an older version: on every
 * read and write of the outbox, and by the periodic purge. Returns how many went.
 */
function purgeDevOutbox(core: Pick<Core, 'store' | 'clock'>): Promise<number> {
  return deleteInBatches(core.store, 'dev_outbox', `created_at < $1 OR "text" NOT LIKE 'v1.%'`, [
    core.clock.now() - DEV_OUTBOX_TTL_MS,
  ])
}

/** Workspace teardown's share of the mail feature: the outbox mails of that workspace's instance. */
export async function deleteWorkspaceMail(core: Pick<Core, 'db'>, workspaceId: string): Promise<void> {
  await core.db.delete(devOutbox).where(eq(devOutbox.workspaceId, workspaceId))
}

/** The periodic purge's share of the mail feature. */
export const purgeExpiredMail = async (core: Pick<Core, 'store' | 'clock'>) => ({
  dev_outbox: await purgeDevOutbox(core),
})

export async function keepInDevOutbox(core: Core, msg: MailMessage): Promise<void> {
  await purgeDevOutbox(core)
  const now = core.clock.now()
  const id = newId('mail', now)
  await core.db.insert(devOutbox).values({
    id,
    workspaceId: msg.workspaceId ?? null,
    to: msg.to,
    subject: msg.subject,
    text: core.secrets.seal(msg.text, outboxContext(id)),
    html: msg.html ? core.secrets.seal(msg.html, outboxContext(id)) : null,
    createdAt: now,
  })
}

/** The latest mails of the dev outbox, newest first, opened; older than a day are deleted first. */
export async function latestDevMails(core: Core, limit: number): Promise<DevMail[]> {
  await purgeDevOutbox(core)
  const rows = await core.db
    .select()
    .from(devOutbox)
    .orderBy(desc(devOutbox.createdAt), desc(devOutbox.id))
    .limit(limit)
  return rows.map((m) => ({
    ...m,
    text: core.secrets.open(m.text, outboxContext(m.id)),
    html: m.html === null ? null : core.secrets.open(m.html, outboxContext(m.id)),
  }))
}

/** How many mails the dev outbox holds (those older than a day are deleted first). */
export async function countDevMails(core: Core): Promise<number> {
  await purgeDevOutbox(core)
  const [row] = await core.db.select({ n: count() }).from(devOutbox)
  return Number(row?.n ?? 0)
}
