import type { Core } from '../../core'
import type { EnqueueOptions } from '../../queue/queue'
import { MAIL_SEND, sealMail } from './jobs'

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
