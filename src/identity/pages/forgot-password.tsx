import { instanceKey } from '../../limits/buckets'
import { waitOf } from '../../limits/decision'
import type { AttemptEntry } from '../../limits/limiter'
import { Alert } from '../../shared/views/components'
import { Layout } from '../../shared/views/hosted-layout'
import { findAccountByEmail, issueAccountToken } from '../accounts'
import { hostedHtml } from '../engine/hosted'
import { issuerFor } from '../instances'
import { HTMX_PATH } from './assets'
import { EmailField, PASSWORDS_OFF_ERROR } from './components'
import type { ForgotForm } from './forms'
import { errorPage, mailWorkspace, type PageContext, type PageRequest } from './http'
import type { InteractionDetails, InteractionLinks } from './interaction'
import { mailLeaves, NO_MAIL } from './verify-email'

const RESET_TTL_MS = 3600_000
/** The same answer whether or not the account exists: no account enumeration. */
const SENT = 'If an account exists for that address, we sent a link to reset the password.'

/**
 * A sign-in whose user asked for a reset link from it (`result.reset` of the interaction, a row of
 * the store): `asked` until the link's tab saves a new password, `done` once it did in a browser
 * that did not start the sign-in, where the sign-in goes back to its form (reset-password.tsx).
 */
export type ResetWait = 'asked' | 'done'

export const resetWaitOf = (details: InteractionDetails): ResetWait | null => {
  const reset = (details.result as { reset?: unknown } | undefined)?.reset
  return reset === 'asked' || reset === 'done' ? reset : null
}

function ForgotPasswordPage(p: { action: string; notice?: string | null; signInUrl?: string }) {
  return (
    <Layout title="Reset your password">
      <h1>Reset your password</h1>
      <p class="sub">We will email you a link to choose a new password.</p>
      <Alert kind="ok" message={p.notice} />
      <form method="post" action={p.action}>
        <EmailField autocomplete="email" />
        <button type="submit">Send reset link</button>
      </form>
      {p.signInUrl ? (
        <div class="links">
          <a href={p.signInUrl}>Back to sign in</a>
        </div>
      ) : (
        ''
      )}
    </Layout>
  )
}

/** The page a sign-in waits on while its user resets the password: it polls as the verify page does. */
function ResetSentPage(p: { links: InteractionLinks; htmx: string; notice: string }) {
  return (
    <Layout title="Check your email" htmx={p.htmx}>
      <h1>Check your email</h1>
      <Alert kind="ok" message={p.notice} />
      <p class="sub">Open the link and choose a new password: this page then goes on by itself.</p>
      <div hx-get={p.links.verifyUrl} hx-trigger="every 2s" hx-swap="none"></div>
      <div class="links">
        <a href={p.links.signInUrl}>Back to sign in</a>
      </div>
    </Layout>
  )
}

/**
 * Asks for a reset link (reset-password.tsx consumes it), at most a few per address. Asked from a
 * sign-in (`links`, `/interaction/<uid>/forgot`), the link leads back into that interaction, whose
 * cookie its tab then sends, and the page waits for the new password as the verify page does.
 * `form` is the post's (null for the page).
 */
export async function forgotPassword(
  c: PageContext,
  p: PageRequest,
  form: ForgotForm | null,
  links?: InteractionLinks,
): Promise<Response> {
  const { core, extensions } = c
  if (!p.instance.policy.allowPassword) return errorPage(PASSWORDS_OFF_ERROR)
  const action = links?.forgotUrl ?? `${p.prefix}/forgot-password`
  if (!form) {
    return hostedHtml(ForgotPasswordPage({ action, signInUrl: links?.signInUrl }))
  }
  const email = form.email.trim().toLowerCase()
  // The same answer whether or not the account exists: no account enumeration. Nor does it say
  // "sent" when no mail can leave.
  const notice = (await mailLeaves(c, p.instance.id)) ? SENT : NO_MAIL
  const slot: AttemptEntry = ['resetMail', instanceKey(p.instance.id, email)]
  if (waitOf(await core.limiter.takeAll([slot])) === 0) {
    // Each request spends its slot, whether or not a mail goes out.
    await c.core.limiter.fail([slot])
    const account = await findAccountByEmail(core, p.instance.id, email)
    // An invited address has its invitation (7 days): a reset link would be a way around it.
    if (account?.status === 'active') {
      const token = await issueAccountToken(core, account, 'reset_password', RESET_TTL_MS, links?.uid)
      const issuer = issuerFor(core.config, p.instance.id)
      const link = `${issuer}${links ? `/interaction/${links.uid}` : ''}/reset-password?token=${encodeURIComponent(token)}`
      await extensions.mail.send(core, {
        to: account.email,
        subject: 'Reset your password',
        text: `Someone asked to reset the password of ${account.email}. To choose a new password, open:\n\n${link}\n\nThe link is valid for 1 hour. If it was not you, ignore this email.`,
        workspaceId: mailWorkspace(account.instanceId),
      })
    }
  }
  if (!links) {
    return hostedHtml(ForgotPasswordPage({ action, notice }))
  }
  const reset: ResetWait = 'asked'
  await p.interaction.result({ reset }, false)
  return hostedHtml(ResetSentPage({ links, htmx: `${p.prefix}${HTMX_PATH}`, notice }))
}
