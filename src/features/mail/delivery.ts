import { createTransport, type Transporter } from 'nodemailer'
import type { Core } from '../../core'
import { keepInDevOutbox } from './outbox'
import type { MailMessage } from './service'

// One transport per thread and SMTP URL: each job worker builds its own, and a URL per key keeps
// tests (one SMTP server each) apart. Not pooled: a connection per mail survives server restarts
// and mail volume (verification, reset) is low.
const transports = new Map<string, Transporter>()

const SMTP_TIMEOUT_MS = 10_000

function transportFor(smtpUrl: string): Transporter {
  let transport = transports.get(smtpUrl)
  if (!transport) {
    // Options in the URL's query string win over these defaults.
    transport = createTransport({
      url: smtpUrl,
      connectionTimeout: SMTP_TIMEOUT_MS,
      greetingTimeout: SMTP_TIMEOUT_MS,
      socketTimeout: SMTP_TIMEOUT_MS,
    })
    transports.set(smtpUrl, transport)
  }
  return transport
}

/** The SMTP password must not reach the job table or the log through an error message. */
function redacted(error: unknown, smtpUrl: string): Error {
  let message = error instanceof Error ? error.message : String(error)
  for (const secret of passwordForms(smtpUrl)) message = message.replaceAll(secret, '***')
  return new Error(`mail delivery failed: ${message}`)
}

function passwordForms(smtpUrl: string): string[] {
  try {
    const { password } = new URL(smtpUrl)
    if (!password) return []
    let decoded = password
    try {
      decoded = decodeURIComponent(password)
    } catch {
      // A stray `%` is kept literally by nodemailer too.
    }
    return [password, decoded]
  } catch {
    return []
  }
}

/**
 * Sends a mail now (the `mail.send` job calls this). Throws on failure so the job is retried.
 * Without SMTP, the mail goes to the dev outbox when it is on (config.devOutbox), else it is
 * dropped with a warning. The log never gets its text: that is where the links are.
 */
export async function deliverMail(core: Core, msg: MailMessage): Promise<void> {
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
    await transportFor(smtpUrl).sendMail({
      from: smtpFrom,
      to: msg.to,
      subject: msg.subject,
      text: msg.text,
      html: msg.html,
    })
  } catch (e) {
    throw redacted(e, smtpUrl)
  }
}
