import { Alert, Layout } from '../../shared/views/hosted-layout'
import { verifyPassword } from '../accounts'
import type { ExternalIdp } from '../deps'
import type { LoginPolicy } from '../policy'
import { accountLockRule, minutesText, SIGN_IN_RULES, type ThrottleEntry, throttleKey } from '../throttle'
import { externalStartUrl, hintedIdp, offeredIdps, startExternal } from './broker'
import { EmailField, ExternalIdpButtons, PASSWORDS_OFF } from './components'
import { finishLogin } from './finish-login'
import { type PageContext, type PageRequest, readForm, send } from './http'
import type { InteractionDetails, InteractionLinks } from './interaction'
import { beginSecondStep, secondStep } from './mfa-interaction'
import { askToVerify } from './verify-email'

interface SignInProps extends InteractionLinks {
  policy: LoginPolicy
  idps: ExternalIdp[]
  email?: string
  error?: string | null
}

/** The password form and its links, as the instance's login policy allows them. */
function SignInPage(p: SignInProps) {
  return (
    <Layout title="Sign in">
      <h1>Sign in</h1>
      <p class="sub">
        to continue to <strong safe>{p.appName}</strong>
      </p>
      <Alert kind="error" message={p.error} />
      <ExternalIdpButtons
        idps={p.idps.map((i) => ({ id: i.id, name: i.name, href: externalStartUrl(p, i) }))}
        divider={p.policy.allowPassword}
      />
      {p.policy.allowPassword ? (
        <>
          <form method="post" action={p.action} autocomplete="on">
            <EmailField autocomplete="username" autofocus value={p.email ?? ''} />
            <label for="password">Password</label>
            <input id="password" name="password" type="password" required autocomplete="current-password" />
            <button type="submit">Sign in</button>
          </form>
          <div class="links">
            {p.policy.allowRegistration ? <a href={p.signUpUrl}>Create an account</a> : ''}
            <a href={p.forgotUrl}>Forgot password?</a>
          </div>
        </>
      ) : p.idps.length ? (
        ''
      ) : (
        <p class="hint">{PASSWORDS_OFF}</p>
      )}
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
  const { policy } = p.instance
  const idps = offeredIdps(p)
  if (!posted) {
    // `idp_hint` skips this page for the IdP it names, unless the browser came back to choose.
    const hinted = p.query.has('choose') ? null : hintedIdp(p, details.params.idp_hint)
    if (hinted) return startExternal(c, p, links, hinted.id)
    const hint = typeof details.params.login_hint === 'string' ? details.params.login_hint : ''
    await send(p.res, 200, SignInPage({ ...links, policy, idps, email: hint }))
    return
  }
  if (!policy.allowPassword) {
    await send(p.res, 403, SignInPage({ ...links, policy, idps }))
    return
  }
  const { core, throttle } = c
  const form = await readForm(p.req)
  const email = (form.get('email') ?? '').trim().toLowerCase()
  // The account's lock is the login policy's (none when its threshold is 0); the address's is fixed.
  const lock = accountLockRule(policy)
  const accountKey = throttleKey('acct', p.instance.id, email)
  const ip: ThrottleEntry = [throttleKey('ip', p.instance.id, p.clientIp), SIGN_IN_RULES.ip]
  const keys: ThrottleEntry[] = lock ? [[accountKey, lock], ip] : [ip]
  const wait = await throttle.reserve(keys)
  if (wait > 0) {
    const error = `Too many failed sign-in attempts. Try again in ${minutesText(wait)}.`
    await send(p.res, 429, SignInPage({ ...links, policy, idps, email, error }))
    return
  }
  const account = await verifyPassword(core, p.instance.id, email, form.get('password') ?? '')
  if (!account) {
    await throttle.fail(keys)
    await send(p.res, 401, SignInPage({ ...links, policy, idps, email, error: 'Wrong email or password.' }))
    return
  }
  await throttle.release([ip])
  // No code for an address the policy wants proven first: the verify page, and a link by mail.
  if (policy.requireEmailVerification && !account.emailVerified) {
    await throttle.reset(accountKey)
    await askToVerify(c, p, account, links, ['pwd'])
    return
  }
  const step = await secondStep(c, p, account)
  if (step) {
    // The password alone does not clear the account's failures: wrong codes before it still count,
    // so signing in again with the password cannot buy more guesses at the second factor.
    if (lock) await throttle.release([[accountKey, lock]])
    await beginSecondStep(p, account, step, links)
    return
  }
  await throttle.reset(accountKey)
  await finishLogin(c, p, account, ['pwd'])
}
