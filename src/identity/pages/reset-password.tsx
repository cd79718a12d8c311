import { instanceKey } from '../../limits/buckets'
import { Alert } from '../../shared/views/components'
import { Layout } from '../../shared/views/hosted-layout'
import {
  type Account,
  checkPassword,
  findAccount,
  markEmailVerified,
  type PasswordRule,
  passwordRuleFor,
  setPassword,
  useAccountToken,
} from '../accounts'
import { hostedHtml } from '../engine/hosted'
import { interactionClaimed } from '../interaction-claims'
import { DonePage, NewPasswordField, PASSWORDS_OFF_ERROR } from './components'
import type { ResetWait } from './forgot-password'
import type { ResetForm } from './forms'
import { errorPage, linkExpired, type PageContext, type PageRequest } from './http'
import { backToTheSignIn, holdsInteraction } from './verify-continue'
import type { VerifyPending } from './verify-email'

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

/**
 * The link mailed by forgot-password.tsx: a new password, once; it signs the account out everywhere.
 * Asked from sign-in `uid` (`/interaction/<uid>/reset-password`), it hands that sign-in back
 * (`signInGoesOn`). `form` is the post's (null for the page).
 */
export async function resetPassword(
  c: PageContext,
  p: PageRequest,
  form: ResetForm | null,
  uid?: string,
): Promise<Response> {
  const { core, extensions } = c
  if (!p.instance.policy.allowPassword) return errorPage(PASSWORDS_OFF_ERROR)
  const action = `${p.prefix}${uid ? `/interaction/${uid}` : ''}/reset-password`
  // The instance's login policy says how long a password must be.
  const rule = passwordRuleFor(p.instance.policy)
  if (!form) {
    return hostedHtml(ResetPasswordPage({ action, rule, token: p.query.get('token') ?? '' }))
  }
  const { token, password } = form
  try {
    checkPassword(password, rule)
  } catch (e) {
    return hostedHtml(ResetPasswordPage({ action, rule, token, error: (e as Error).message }), 422)
  }
  const account = await useAccountToken(core, p.instance.id, token, 'reset_password', uid)
  if (!account) {
    return errorPage(linkExpired('This reset link is invalid, expired or already used. Ask for a new one.'))
  }
  await setPassword(core, extensions, account, password, rule)
  // Whoever could read the mailbox proved the address too.
  await markEmailVerified(core, account)
  await c.core.limiter.forget('signInAccount', instanceKey(p.instance.id, account.email))
  if (uid) return signInGoesOn(c, p, uid, account)
  return hostedHtml(
    DonePage({
      title: 'Password changed',
      message: 'Your password has been changed. You can sign in with it now.',
    }),
  )
}

/**
 * After a new password, the sign-in it was asked from goes on in the tab that started it. Only where
 * this browser started it: the tab that waits is the one of whoever typed the address into the
 * form, and the mailbox's owner saving a password from an unasked-for mail must not sign a stranger
 * in. Elsewhere, the waiting tab goes back to its form, where the new password signs in.
 */
async function signInGoesOn(
  c: PageContext,
  p: PageRequest,
  uid: string,
  account: Account,
): Promise<Response> {
  const here = holdsInteraction(p, uid)
  const waiting = await p.instance.provider.Interaction.find(uid)
  // Its auth_epoch is the one after the change: the sign-in waits on that password, no older one.
  const changed = await findAccount(c.core, p.instance.id, account.id)
  if (waiting && changed && !(await interactionClaimed(c.core, p.instance, uid))) {
    const verify: VerifyPending = { accountId: changed.id, epoch: changed.authEpoch, amr: ['pwd'] }
    const reset: ResetWait = 'done'
    waiting.result = here ? { verify } : { reset }
    await waiting.persist()
  }
  return backToTheSignIn(c, p, uid, {
    title: 'Password changed',
    message: 'Your password has been changed.',
    back: here ? undefined : 'Go back to the tab where you were signing in, and sign in with it there.',
  })
}
