import { Alert, Layout } from '../../shared/views/hosted-layout'
import { verifyPassword } from '../accounts'
import { minutesText, SIGN_IN_RULES, type ThrottleEntry, throttleKey } from '../throttle'
import { EmailField } from './components'
import { finishLogin } from './finish-login'
import { type PageContext, type PageRequest, readForm, send } from './http'
import type { InteractionDetails, InteractionLinks } from './interaction'
import { beginSecondStep, secondStep } from './mfa-interaction'

interface SignInProps extends InteractionLinks {
  email?: string
  error?: string | null
}

function SignInPage(p: SignInProps) {
  return (
    <Layout title="Sign in">
      <h1>Sign in</h1>
      <p class="sub">
        to continue to <strong safe>{p.appName}</strong>
      </p>
      <Alert kind="error" message={p.error} />
      <form method="post" action={p.action} autocomplete="on">
        <EmailField autocomplete="username" autofocus value={p.email ?? ''} />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" required autocomplete="current-password" />
        <button type="submit">Sign in</button>
      </form>
      <div class="links">
        <a href={p.signUpUrl}>Create an account</a>
        <a href={p.forgotUrl}>Forgot password?</a>
      </div>
      {p.passkeyUrl ? (
        <div class="links">
          <a href={p.passkeyUrl}>Sign in with a passkey</a>
        </div>
      ) : (
        ''
      )}
    </Layout>
  )
}

/**
 * The sign-in page of an interaction, and its post: throttled per account and per client address,
 * counted before the slow hash so guesses sent at once cannot all get past the limit.
 */
export async function signIn(
  c: PageContext,
  p: PageRequest,
  details: InteractionDetails,
  links: InteractionLinks,
  posted: boolean,
) {
  if (!posted) {
    const hint = typeof details.params.login_hint === 'string' ? details.params.login_hint : ''
    await send(p.res, 200, SignInPage({ ...links, email: hint }))
    return
  }
  const { core, throttle } = c
  const form = await readForm(p.req)
  const email = (form.get('email') ?? '').trim().toLowerCase()
  const keys: Record<'account' | 'ip', ThrottleEntry> = {
    account: [throttleKey('acct', p.instance.id, email), SIGN_IN_RULES.account],
    ip: [throttleKey('ip', p.instance.id, p.clientIp), SIGN_IN_RULES.ip],
  }
  const wait = await throttle.reserve([keys.account, keys.ip])
  if (wait > 0) {
    const error = `Too many failed sign-in attempts. Try again in ${minutesText(wait)}.`
    await send(p.res, 429, SignInPage({ ...links, email, error }))
    return
  }
  const account = await verifyPassword(core, p.instance.id, email, form.get('password') ?? '')
  if (!account) {
    await throttle.fail([keys.account, keys.ip])
    await send(p.res, 401, SignInPage({ ...links, email, error: 'Wrong email or password.' }))
    return
  }
  await throttle.release([keys.ip])
  const step = await secondStep(c, p, account)
  if (step) {
    // The password alone does not clear the account's failures: wrong codes before it still count,
    // so signing in again with the password cannot buy more guesses at the second factor.
    await throttle.release([keys.account])
    await beginSecondStep(p, account, step, links)
    return
  }
  await throttle.reset(keys.account[0])
  await finishLogin(c, p, account, ['pwd'])
}
