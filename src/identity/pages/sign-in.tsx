import { minutesText } from '../../limits/attempts'
import { instanceKey } from '../../limits/buckets'
import { waitOf } from '../../limits/decision'
import type { AttemptEntry } from '../../limits/limiter'
import { Alert } from '../../shared/views/components'
import { Layout } from '../../shared/views/hosted-layout'
import { type Account, verifyPassword } from '../accounts'
import type { ExternalIdp } from '../deps'
import { hostedHtml } from '../engine/hosted'
import { accountLockRule, type LoginPolicy } from '../login-policy'
import { externalStartUrl, hintedIdp, offeredIdps, startExternal } from './broker'
import { EmailField, ExternalIdpButtons, PASSWORDS_OFF, PasswordField } from './components'
import { finishLogin } from './finish-login'
import type { LoginForm } from './forms'
import type { PageContext, PageRequest } from './http'
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
            <PasswordField />
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

/** The sign-in page of an interaction (`form` null), and its post (the password's check: checkPassword). */
export async function signIn(
  c: PageContext,
  p: PageRequest,
  details: InteractionDetails,
  links: InteractionLinks,
  form: LoginForm | null,
): Promise<Response> {
  const { policy } = p.instance
  const idps = offeredIdps(p)
  if (!form) {
    // `idp_hint` skips this page for the IdP it names, unless the browser came back to choose.
    const hinted = p.query.has('choose') ? null : hintedIdp(p, details.params.idp_hint)
    if (hinted) return startExternal(c, p, links, hinted.id)
    const hint = typeof details.params.login_hint === 'string' ? details.params.login_hint : ''
    return hostedHtml(SignInPage({ ...links, policy, idps, email: hint }))
  }
  if (!policy.allowPassword) {
    return hostedHtml(SignInPage({ ...links, policy, idps }), 403)
  }
  const email = form.email.trim().toLowerCase()
  const checked = await checkPassword(c, p, email, form.password)
  if (!checked.ok) {
    return hostedHtml(SignInPage({ ...links, policy, idps, email, error: checked.error }), checked.status)
  }
  const { account, release } = checked
  // No code for an address the policy wants proven first: the verify page, and a link by mail.
  if (policy.requireEmailVerification && !account.emailVerified) {
    await release(true)
    return askToVerify(c, p, account, links, ['pwd'])
  }
  const step = await secondStep(c, p, account)
  await release(!step)
  if (step) return beginSecondStep(p, account, step, links)
  return finishLogin(c, p, account, ['pwd'])
}

/**
 * A password's check for the account of `email`, throttled per account and per client address,
 * counted before the slow hash so guesses sent at once cannot all get past the limit. A right
 * password gives back the address's slot; `release(done)` then clears the account's failures when
 * the sign-in ends here, or only frees its slot when a second factor follows: wrong codes before
 * it still count, so signing in again with the password cannot buy more guesses at the factor.
 */
export async function checkPassword(
  c: PageContext,
  p: PageRequest,
  email: string,
  password: string,
): Promise<
  | { ok: true; account: Account; release: (done: boolean) => Promise<void> }
  | { ok: false; status: number; error: string }
> {
  // The account's lock is the login policy's (none when its threshold is 0); the address's is fixed.
  const lock = accountLockRule(p.instance.policy)
  const accountKey = instanceKey(p.instance.id, email)
  const ip: AttemptEntry = ['signInAddress', instanceKey(p.instance.id, p.clientIp)]
  const keys: AttemptEntry[] = lock ? [['signInAccount', accountKey, lock], ip] : [ip]
  const wait = waitOf(await c.core.limiter.takeAll(keys))
  if (wait > 0)
    return {
      ok: false,
      status: 429,
      error: `Too many failed sign-in attempts. Try again in ${minutesText(wait)}.`,
    }
  const account = await verifyPassword(c.core, p.instance.id, email, password)
  if (!account) {
    await c.core.limiter.fail(keys)
    return { ok: false, status: 401, error: 'Wrong email or password.' }
  }
  await c.core.limiter.release([ip])
  const release = async (done: boolean) => {
    if (done) await c.core.limiter.forget('signInAccount', accountKey)
    else if (lock) await c.core.limiter.release([['signInAccount', accountKey, lock]])
  }
  return { ok: true, account, release }
}
