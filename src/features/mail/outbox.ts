import { desc, eq, lt, notLike, or } from 'drizzle-orm'
import type { Core } from '../../core'
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
function purgeDevOutbox(core: Pick<Core, 'db' | 'clock'>): number {
  return core.db
    .delete(devOutbox)
    .where(or(lt(devOutbox.createdAt, core.clock.now() - DEV_OUTBOX_TTL_MS), notLike(devOutbox.text, 'v1.%')))
    .returning({ id: devOutbox.id })
    .all().length
}

/** Workspace teardown's share of the mail feature: the outbox mails of that workspace's instance. */
export function deleteWorkspaceMail(core: Pick<Core, 'db'>, workspaceId: string): void {
  core.db.delete(devOutbox).where(eq(devOutbox.workspaceId, workspaceId)).run()
}

/** The periodic purge's share of the mail feature. */
export const purgeExpiredMail = (core: Pick<Core, 'db' | 'clock'>) => ({ dev_outbox: purgeDevOutbox(core) })

export function keepInDevOutbox(core: Core, msg: MailMessage): void {
  purgeDevOutbox(core)
  const now = core.clock.now()
  const id = newId('mail', now)
  core.db
    .insert(devOutbox)
    .values({
      id,
      workspaceId: msg.workspaceId ?? null,
      to: msg.to,
      subject: msg.subject,
      text: core.secrets.seal(msg.text, outboxContext(id)),
      html: msg.html ? core.secrets.seal(msg.html, outboxContext(id)) : null,
      createdAt: now,
    })
    .run()
}

/** The latest mails of the dev outbox, newest first, opened; older than a day are deleted first. */
export function latestDevMails(core: Core, limit: number): DevMail[] {
  purgeDevOutbox(core)
  return core.db
    .select()
    .from(devOutbox)
    .orderBy(desc(devOutbox.createdAt), desc(devOutbox.id))
    .limit(limit)
    .all()
    .map((m) => ({
      ...m,
      text: core.secrets.open(m.text, outboxContext(m.id)),
      html: m.html === null ? null : core.secrets.open(m.html, outboxContext(m.id)),
    }))
}
