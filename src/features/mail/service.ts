import type { Principal } from '../../access/model'
import type { Core } from '../../core'
import type { EnqueueOptions } from '../../queue/job-queue'
import { MAIL_SEND, sealMail } from './jobs'
import { countDevMails } from './outbox'
import { type MailRoute, routeMail } from './route'

export { type MailPurpose, type MailRoute, routeMail, type TestCaller } from './route'

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
  (await routeMail(core, workspaceId)).via !== 'none'

/** What became of a mail just queued, as a page tells it: never "sent" for one that goes nowhere. */
export const mailFate = (via: MailRoute['via']) =>
  via === 'none'
    ? 'not sent'
    : via === 'outbox'
      ? 'kept in the dev outbox (no mail server is set)'
      : 'queued for sending'

/**
 * What became of an invitation mail just queued, in truth: queued, kept in the dev outbox, or not
 * sent, and then who can hand its link over.
 */
export function invitationOutcome(email: string, mail: MailState): string {
  const invitation = `Invitation to ${email} ${mailFate(mail.via)}`
  if (mail.via !== 'none') return `${invitation}. The link works for 7 days.`
  return `${invitation}: this workspace cannot send mail. ${
    mail.canCopy
      ? 'Use "Copy link" on its row and hand the link over yourself.'
      : 'Ask the platform administrator for its link.'
  }`
}

/** The platform administrator's dashboard session: who reads the dev outbox and may be handed mailed links. */
export const isAdminSession = (p: Principal) =>
  p.kind === 'user' && p.via === 'session' && p.account.isPlatformAdmin

/**
 * How a workspace's mail leaves now, as its pages tell it, and whether `principal` may be handed a
 * fresh link of its mail (an invitation, an email verification) to pass on by other means: only
 * the platform administrator's session, and only while that mail goes nowhere. Nobody else is
 * ever shown a working link.
 */
export interface MailState {
  via: MailRoute['via']
  canCopy: boolean
}

export async function mailStateOf(core: Core, principal: Principal, workspaceId: string): Promise<MailState> {
  const { via } = await routeMail(core, workspaceId)
  return { via, canCopy: via === 'none' && isAdminSession(principal) }
}

export const mayCopyMailedLinks = async (core: Core, principal: Principal, workspaceId: string) =>
  (await mailStateOf(core, principal, workspaceId)).canCopy

/** The mails the dev outbox holds now, for the administrator's link to it; null when it is off. */
export const devOutboxSize = async (core: Core): Promise<number | null> =>
  core.config.devOutbox ? countDevMails(core) : null
