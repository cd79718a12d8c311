import { Alert, Layout } from '../../shared/views/hosted-layout'
import { findAccountByEmail, issueAccountToken } from '../accounts'
import { writeError } from '../errors'
import { issuerFor } from '../instances'
import { type ThrottleEntry, throttleKey } from '../throttle'
import { EmailField, PASSWORDS_OFF_ERROR } from './components'
import { mailWorkspace, type PageContext, type PageRequest, readForm, send } from './http'
import { mailLeaves, NO_MAIL } from './verify-email'

const RESET_TTL_MS = 3600_000
/** Reset mails per address: every request takes a slot, none is given back. */
const RESET_MAIL_RULE = { limit: 3, windowMs: 15 * 60_000, lockMs: 15 * 60_000 }

function ForgotPasswordPage(p: { action: string; notice?: string | null }) {
  return (
    <Layout title="Reset your password">
      <h1>Reset your password</h1>
      <p class="sub">We will email you a link to choose a new password.</p>
      <Alert kind="ok" message={p.notice} />
      <form method="post" action={p.action}>
        <EmailField autocomplete="email" />
        <button type="submit">Send reset link</button>
      </form>
    </Layout>
  )
}

/** Asks for a reset link (reset-password.tsx consumes it), at most a few per address. */
export async function forgotPassword(c: PageContext, p: PageRequest) {
  const { core, deps, throttle } = c
  if (!p.instance.policy.allowPassword) return writeError(p.res, PASSWORDS_OFF_ERROR)
  const action = `${p.prefix}/forgot-password`
  if (p.req.method !== 'POST') {
    await send(p.res, 200, ForgotPasswordPage({ action }))
    return
  }
  const email = ((await readForm(p.req)).get('email') ?? '').trim().toLowerCase()
  // The same answer whether or not the account exists: no account enumeration. Nor does it say
  // "sent" when no mail can leave.
  const notice = (await mailLeaves(c, p.instance.id))
    ? 'If an account exists for that address, we sent a link to reset the password.'
    : NO_MAIL
  const slot: ThrottleEntry = [throttleKey('reset', p.instance.id, email), RESET_MAIL_RULE]
  if ((await throttle.reserve([slot])) === 0) {
    // Each request spends its slot, whether or not a mail goes out.
    await throttle.fail([slot])
    const account = await findAccountByEmail(core, p.instance.id, email)
    // An invited address has its invitation (7 days): a reset link would be a way around it.
    if (account?.status === 'active') {
      const token = await issueAccountToken(core, account, 'reset_password', RESET_TTL_MS)
      const link = `${issuerFor(core.config, p.instance.id)}/reset-password?token=${encodeURIComponent(token)}`
      await deps.sendMail(core, {
        to: account.email,
        subject: 'Reset your password',
        text: `Someone asked to reset the password of ${account.email}. To choose a new password, open:\n\n${link}\n\nThe link is valid for 1 hour. If it was not you, ignore this email.`,
        workspaceId: mailWorkspace(account.instanceId),
      })
    }
  }
  await send(p.res, 200, ForgotPasswordPage({ action, notice }))
}
