import { Alert, Layout } from '../../shared/views/hosted-layout'
import {
  checkPassword,
  markEmailVerified,
  type PasswordRule,
  passwordRuleFor,
  setPassword,
  useAccountToken,
} from '../accounts'
import { writeError } from '../errors'
import { throttleKey } from '../throttle'
import { DonePage, NewPasswordField, PASSWORDS_OFF_ERROR } from './components'
import { linkExpired, type PageContext, type PageRequest, readForm, send } from './http'

function ResetPasswordPage(p: { action: string; token: string; rule: PasswordRule; error?: string | null }) {
  return (
    <Layout title="Choose a new password">
      <h1>Choose a new password</h1>
      <Alert kind="error" message={p.error} />
      <form method="post" action={p.action}>
        <input type="hidden" name="token" value={p.token} />
        <NewPasswordField label="New password" rule={p.rule} />
        <button type="submit">Save password</button>
      </form>
    </Layout>
  )
}

/** The link mailed by forgot-password.tsx: a new password, once; it signs the account out everywhere. */
export async function resetPassword({ core, deps, throttle }: PageContext, p: PageRequest) {
  if (!p.instance.policy.allowPassword) return writeError(p.res, PASSWORDS_OFF_ERROR)
  const action = `${p.prefix}/reset-password`
  // The instance's login policy says how long a password must be.
  const rule = passwordRuleFor(p.instance.policy)
  if (p.req.method !== 'POST') {
    await send(p.res, 200, ResetPasswordPage({ action, rule, token: p.query.get('token') ?? '' }))
    return
  }
  const form = await readForm(p.req)
  const token = form.get('token') ?? ''
  const password = form.get('password') ?? ''
  try {
    checkPassword(password, rule)
  } catch (e) {
    await send(p.res, 422, ResetPasswordPage({ action, rule, token, error: (e as Error).message }))
    return
  }
  const account = await useAccountToken(core, p.instance.id, token, 'reset_password')
  if (!account) {
    writeError(p.res, linkExpired('This reset link is invalid, expired or already used. Ask for a new one.'))
    return
  }
  await setPassword(core, deps, account, password, rule)
  // Whoever could read the mailbox proved the address too.
  await markEmailVerified(core, account)
  await throttle.reset(throttleKey('acct', p.instance.id, account.email))
  await send(
    p.res,
    200,
    DonePage({
      title: 'Password changed',
      message: 'Your password has been changed. You can sign in with it now.',
    }),
  )
}
