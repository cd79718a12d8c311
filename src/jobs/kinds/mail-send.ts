import type { Core } from '../../core'
import {
  deliverMail,
  forgetMailPayload,
  MAIL_SEND,
  type MailJobPayload,
  openMail,
} from '../../shared/mail/mailer'
import type { JobHandler } from '../runner'

/**
 * Delivers one queued mail; a failure throws, so the runner retries it with backoff. Once the
 * job is finished (sent, or failed for the last time) its payload is cleared: no job row keeps a
 * link. A payload already cleared means the mail went out before a crash: nothing to send again.
 */
export const mailSend: JobHandler<Core, MailJobPayload> = {
  kind: MAIL_SEND,
  async run(payload, core, job) {
    const msg = openMail(core, payload)
    if (!msg) return
    try {
      await deliverMail(core, msg)
    } catch (e) {
      if (job.attempts >= job.max_attempts) forgetMailPayload(core, job.id)
      throw e
    }
    forgetMailPayload(core, job.id)
  },
}
