import { desc, eq, lt, notLike, or } from 'drizzle-orm'
import { createTransport, type Transporter } from 'nodemailer'
import type { Core } from '../../core'
import { devOutbox, jobs } from '../../db/schema'
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
 * A `mail.send` job payload. Mails carry sign-in and reset links, so the message is sealed under
 * the master key while queued, and the payload becomes `null` once the job is finished (sent or
 * given up). A plain MailMessage is a job queued before payloads were sealed.
 */
export type MailJobPayload = { sealed: string } | MailMessage | null

const PAYLOAD_CONTEXT = 'mail.send'

export const sealMail = (core: Pick<Core, 'secrets'>, msg: MailMessage): MailJobPayload => ({
  sealed: core.secrets.seal(JSON.stringify(msg), PAYLOAD_CONTEXT),
})

/** The message of a payload; null when there is nothing left to send. */
export function openMail(core: Pick<Core, 'secrets'>, payload: MailJobPayload): MailMessage | null {
  if (!payload) return null
  if ('sealed' in payload)
    return JSON.parse(core.secrets.open(payload.sealed, PAYLOAD_CONTEXT)) as MailMessage
  return payload
}

/** A finished job keeps no copy of its mail (see MailJobPayload). */
export function forgetMailPayload(core: Pick<Core, 'db'>, jobId: string): void {
  core.db.update(jobs).set({ payload: 'null' }).where(eq(jobs.id, jobId)).run()
}

/**
 * Queues a mail: the caller never waits on an SMTP server, and a mail enqueued in the caller's
 * transaction (`tx`) is sent only if that transaction commits. Returns the job id.
 */
export function sendMail(core: Core, msg: MailMessage, opts: { tx?: EnqueueOptions['tx'] } = {}): string {
  return core.jobs.enqueue(MAIL_SEND, sealMail(core, msg), {
    workspaceId: msg.workspaceId ?? null,
    tx: opts.tx,
  })
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
    keepInDevOutbox(core, msg)
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

/** A mail of the dev outbox, its text and html opened. */
export type DevMail = typeof devOutbox.$inferSelect

/** The longest lifetime of a mailed link (email verification): the outbox keeps nothing older. */
export const DEV_OUTBOX_TTL_MS = 24 * 3600_000

// Bound to the row, so a sealed text cannot be moved to another mail unnoticed.
const outboxContext = (id: string) => `dev-outbox:${id}`

/** Drops mails past their links' lifetime, and any kept in clear by an older version. */
function purgeDevOutbox(core: Core): void {
  core.db
    .delete(devOutbox)
    .where(or(lt(devOutbox.createdAt, core.clock.now() - DEV_OUTBOX_TTL_MS), notLike(devOutbox.text, 'v1.%')))
    .run()
}

function keepInDevOutbox(core: Core, msg: MailMessage): void {
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
