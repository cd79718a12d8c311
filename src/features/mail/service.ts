import type { Core } from '../../core'
import type { EnqueueOptions } from '../../queue/queue'
import { MAIL_SEND, sealMail } from './jobs'
import { countDevMails } from './outbox'
import { mailRoute } from './route'

export { type MailRoute, mailRoute } from './route'

export interface MailMessage {
  to: string
  subject: string
  text: string
  html?: string
  workspaceId?: string | null
}

/**
 * Queues a mail: the caller never waits on an SMTP server, and a mail enqueued in the caller's
 * transaction (`tx`) is sent only if that transaction commits. Returns the job id.
 */
export function sendMail(
  core: Core,
  msg: MailMessage,
  opts: { tx?: EnqueueOptions['tx'] } = {},
): Promise<string> {
  return core.jobs.enqueue(MAIL_SEND, sealMail(core, msg), {
    workspaceId: msg.workspaceId ?? null,
    tx: opts.tx,
  })
}

/** Whether mail of the workspace (null: the platform's) goes anywhere now, or is dropped. */
export const mailLeaves = async (core: Core, workspaceId: string | null | undefined) =>
  (await mailRoute(core, workspaceId)).via !== 'none'

/** The mails the dev outbox holds now, for the administrator's link to it; null when it is off. */
export const devOutboxSize = async (core: Core): Promise<number | null> =>
  core.config.devOutbox ? countDevMails(core) : null
