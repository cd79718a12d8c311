import type { Core } from '../../core'
import { deliverMail, MAIL_SEND, type MailMessage } from '../../shared/mail/mailer'
import type { JobHandler } from '../runner'

/** Delivers one queued mail; a failure throws, so the runner retries it with backoff. */
export const mailSend: JobHandler<Core, MailMessage> = {
  kind: MAIL_SEND,
  run: (msg, core) => deliverMail(core, msg),
}
