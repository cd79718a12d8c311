import type { Core } from '../../core'
import { sendThroughUrl } from '../../shared/smtp'
import { sendThroughWorkspaceSmtp } from '../smtp/service'
import { keepInDevOutbox } from './outbox'
import type { MailMessage } from './service'

/**
 * Sends a mail now (the `mail.send` job calls this). Throws on failure so the job is retried; the
 * error never holds an SMTP password. A workspace's mail goes through its own SMTP server when it
 * has an active one; any other mail through the platform's (SMTP_URL). Without SMTP, the mail goes
 * to the dev outbox when it is on (config.devOutbox), else it is dropped with a warning. The log
 * never gets its text: that is where the links are.
 */
export async function deliverMail(core: Core, msg: MailMessage): Promise<void> {
  if (msg.workspaceId && (await sendThroughWorkspaceSmtp(core, msg.workspaceId, msg))) return
  const { smtpUrl, smtpFrom } = core.config
  if (!smtpUrl) {
    if (!core.config.devOutbox) {
      core.log.warn('mail not delivered: set SMTP_URL', { to: msg.to, subject: msg.subject })
      return
    }
    await keepInDevOutbox(core, msg)
    core.log.info('mail kept in the dev outbox', { to: msg.to, subject: msg.subject })
    return
  }
  try {
    await sendThroughUrl(smtpUrl, {
      from: smtpFrom,
      to: msg.to,
      subject: msg.subject,
      text: msg.text,
      html: msg.html,
    })
  } catch (e) {
    throw new Error(`mail delivery failed: ${(e as Error).message}`)
  }
}
