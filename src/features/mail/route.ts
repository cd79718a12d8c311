import type { Core } from '../../core'
import { type Account, normalizeEmail } from '../../identity'
import { activeProvider, type SmtpProvider } from '../smtp/service'

/** Who asks for a test mail: a person's platform account, or null for a machine key (no address of its own). */
export type TestCaller = Pick<Account, 'email' | 'emailVerified'> | null

/**
 * What a mail is for: one the platform sends for a workspace (a sign-in link, an invitation), or
 * the SMTP settings' test mail, which a caller sends at once to `to` (DESIGN "SMTP", issue 56).
 */
export type MailPurpose = { kind: 'send' } | { kind: 'test'; caller: TestCaller; to: string }

const SEND: MailPurpose = { kind: 'send' }

/**
 * Where a mail leaves by, and why: the workspace's own SMTP server, the platform's (SMTP_URL), the
 * dev outbox, or `none`: it cannot be sent, `why` says so (for a test mail, `recipient` when it is
 * the address that is refused, not the server that is missing).
 */
export type MailRoute =
  | { via: 'workspace'; provider: SmtpProvider; why: string }
  | { via: 'platform'; smtpUrl: string; why: string }
  | { via: 'outbox'; why: string }
  | { via: 'none'; why: string; recipient?: boolean }

const NO_SERVER = "no SMTP server is set: neither this workspace's nor the platform's (SMTP_URL)"

/**
 * How a mail of a workspace (null: the platform's own, such as its sign-up verification) leaves
 * now: through the workspace's active SMTP provider, else the platform's SMTP_URL, else the dev
 * outbox when it is on, else nowhere. A test mail never goes to the outbox (it tests a server),
 * and through the platform's server only to the caller's own verified address, so the platform's
 * server and sender are no open relay for a workspace named with a phishing line. The one place
 * that decides: delivery sends by it, the SMTP test mail too, and every page that says a mail was
 * "queued" or "not sent", or warns that no mail can leave, asks it.
 */
export async function routeMail(
  core: Core,
  workspaceId: string | null | undefined,
  purpose: MailPurpose = SEND,
): Promise<MailRoute> {
  const provider = workspaceId ? await activeProvider(core, workspaceId) : undefined
  if (provider) return { via: 'workspace', provider, why: "this workspace's own SMTP server is set" }
  const { smtpUrl, devOutbox } = core.config
  if (purpose.kind === 'test') {
    const refused = platformRecipientProblem(purpose.caller, purpose.to)
    if (refused !== null) return { via: 'none', why: refused, recipient: true }
    if (!smtpUrl)
      return {
        via: 'none',
        why: 'This instance has no SMTP server (SMTP_URL is unset): its mail goes to the development outbox or is dropped. Set up a server for this workspace to test it.',
      }
  }
  if (smtpUrl) return { via: 'platform', smtpUrl, why: "the platform's server (SMTP_URL) is set" }
  if (devOutbox) return { via: 'outbox', why: `${NO_SERVER}; the development outbox keeps it` }
  return { via: 'none', why: `${NO_SERVER}, and the development outbox is off` }
}

/** The platform's test-mail rule's refusal of an address that is not the caller's. */
const NOT_YOUR_ADDRESS =
  "Through the platform's mail server a test mail goes only to your own verified address. Set up this workspace's own server to test any address."

/**
 * Where a test mail through the platform's server may go: only to the caller's own verified
 * address. Null when `to` is it; otherwise what is wrong.
 */
function platformRecipientProblem(caller: TestCaller, to: string): string | null {
  if (!caller)
    return "Through the platform's mail server a test mail goes only to a person's own verified address, and a machine key has none. Set up this workspace's own server to test any address."
  if (normalizeEmail(to) !== caller.email) return NOT_YOUR_ADDRESS
  if (!caller.emailVerified)
    return "Verify your address first: through the platform's mail server a test mail goes only to your own verified address."
  return null
}
