import type { Core } from '../../core'
import type { JobHandler } from '../../jobs/runner'
import { deliverMail } from './delivery'
import type { MailMessage } from './service'

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
function openMail(core: Pick<Core, 'secrets'>, payload: MailJobPayload): MailMessage | null {
  if (!payload) return null
  if ('sealed' in payload)
    return JSON.parse(core.secrets.open(payload.sealed, PAYLOAD_CONTEXT)) as MailMessage
  return payload
}

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
      if (job.attempts >= job.max_attempts) await core.jobs.clearPayload(job.id)
      throw e
    }
    await core.jobs.clearPayload(job.id)
  },
}
