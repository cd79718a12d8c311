import { desc } from 'drizzle-orm'
import { createTransport, type Transporter } from 'nodemailer'
import type { Config } from '../../config'
import type { Core } from '../../core'
import { devOutbox } from '../../db/schema'
import type { EnqueueOptions } from '../../jobs/queue'
import { newId } from '../ids'

export interface MailMessage {
  to: string
  subject: string
  text: string
  html?: string
  workspaceId?: string | null
}

export const MAIL_SEND = 'mail.send'

/**
 * Queues a mail: the caller never waits on an SMTP server, and a mail enqueued in the caller's
 * transaction (`tx`) is sent only if that transaction commits. Returns the job id.
 */
export function sendMail(core: Core, msg: MailMessage, opts: { tx?: EnqueueOptions['tx'] } = {}): string {
  return core.jobs.enqueue(MAIL_SEND, msg, { workspaceId: msg.workspaceId ?? null, tx: opts.tx })
}

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

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]'])

/**
 * Mails carry sign-in and reset links: they may be shown outside a mailbox (log, dev outbox) only
 * on a developer's machine, i.e. when no SMTP is configured AND the public URL is a loopback one.
 */
export const devOutboxEnabled = (config: Config) =>
  !config.smtpUrl && LOOPBACK_HOSTS.has(new URL(config.baseUrl).hostname)

/**
 * Sends a mail now (the `mail.send` job calls this). Throws on failure so the job is retried.
 * Without SMTP on a local install the mail goes to the log and the dev outbox; on a real
 * deployment without SMTP it is dropped with a warning (its links must not land in a log).
 */
export async function deliverMail(core: Core, msg: MailMessage): Promise<void> {
  const { smtpUrl, smtpFrom } = core.config
  if (!smtpUrl) {
    if (!devOutboxEnabled(core.config)) {
      core.log.warn('mail not delivered: set SMTP_URL', { to: msg.to, subject: msg.subject })
      return
    }
    core.log.info('mail (no SMTP configured)', { to: msg.to, subject: msg.subject, text: msg.text })
    core.db
      .insert(devOutbox)
      .values({
        id: newId('mail', core.clock.now()),
        workspaceId: msg.workspaceId ?? null,
        to: msg.to,
        subject: msg.subject,
        text: msg.text,
        html: msg.html ?? null,
        createdAt: core.clock.now(),
      })
      .run()
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

export type DevMail = typeof devOutbox.$inferSelect

/** The latest mails of the dev outbox, newest first. */
export const latestDevMails = (core: Pick<Core, 'db'>, limit: number): DevMail[] =>
  core.db.select().from(devOutbox).orderBy(desc(devOutbox.createdAt), desc(devOutbox.id)).limit(limit).all()
