import { minutesText } from '../../limits/attempts'
import { instanceKey } from '../../limits/buckets'
import { waitOf } from '../../limits/decision'
import type { AttemptEntry } from '../../limits/limiter'
import { AppError } from '../../shared/errors'
import { Alert } from '../../shared/views/components'
import { Layout } from '../../shared/views/hosted-layout'
import { type Account, findAccount } from '../accounts'
import type { IdentityLink } from '../broker/accounts'
import { hostedHtml, seeOther } from '../engine/hosted'
import { accountLockRule } from '../login-policy'
import { accountFactors, hasSecondFactor, type MfaSummary } from '../mfa/factors'
import { instanceLabel } from '../mfa/instance-label'
import { authenticationOptions, registerPasskey, registrationOptions, verifyPasskey } from '../mfa/passkeys'
import { issueRecoveryCodes, useRecoveryCode } from '../mfa/recovery'
import { startTotpEnrolment, useTotpCode } from '../mfa/totp'
import { type Amr, finishLogin } from './finish-login'
import type { MfaForm, PasskeySignInForm } from './forms'
import type { PageContext, PageRequest } from './http'
import type { InteractionDetails, InteractionLinks } from './interaction'
import { resultOf } from './links'
import { CodeField, PasskeyForm, RecoveryCodesPage, TotpSetup } from './mfa-views'
import { askToVerify } from './verify-email'

/**
 * Where a sign-in stands between its password and its second factor. It is kept in the
 * interaction (a row of the store, `result.mfa`), never in this process: the next request of the
 * same sign-in may reach another node. `challenge`: the account has a factor to prove;
 * `enrol`: the policy requires one and the account has none; `enrolled`: the factor was just set
 * up and its recovery codes shown, the sign-in ends on "Continue" with `amr`.
 */
interface MfaPending {
  accountId: string
  /**
   * The account's auth_epoch when the password was right: a sign-out everywhere since (a password
   * change, an MFA reset) voids the step.
   */
  epoch: number
  step: 'challenge' | 'enrol' | 'enrolled'
  amr?: Amr[]
  /** How the first step was made when it was not a password: an external IdP's sign-in. */
  first?: FirstStep
}

/**
 * A first step through an IdP: the IdP that signed the user in and the `amr` that counts of it; or
 * the password that proved the account an IdP's identity is to be linked to (`link`, done only
 * when the sign-in ends).
 */
export interface FirstStep {
  amr: Amr[]
  viaIdp: string
  link?: IdentityLink
}

const firstAmr = (pending: Pick<MfaPending, 'first'>): Amr[] => pending.first?.amr ?? ['pwd']

/** The sign-in's end once its second step is made (finishLogin), with the first step's IdP and link. */
const finishWith = (c: PageContext, p: PageRequest, account: Account, amr: Amr[], pending: MfaPending) =>
  finishLogin(c, p, account, amr, pending.first?.viaIdp, pending.first?.link)

const pendingOf = (details: InteractionDetails) =>
  resultOf<MfaPending>(details, 'mfa', { accountId: 'string', epoch: 'number' })

const keep = (p: PageRequest, mfa: MfaPending) => p.interaction.result({ mfa }, false)

/**
 * What a right password leads to: a second factor to prove when the account has one (whatever the
 * policy now says: a factor once set up keeps protecting the account until an admin resets it), an
 * enrolment when the policy requires one, or nothing (the sign-in ends with the password).
 */
export async function secondStep(c: PageContext, p: PageRequest, account: Account) {
  const factors = await accountFactors(c.core, p.instance.id, account.id)
  if (hasSecondFactor(factors)) return 'challenge' as const
  return p.instance.policy.mfa === 'required' ? ('enrol' as const) : null
}

/** Records the password's success in the interaction and sends the browser to the second step. */
export async function beginSecondStep(
  p: PageRequest,
  account: Account,
  step: 'challenge' | 'enrol',
  links: InteractionLinks,
  first?: FirstStep,
): Promise<Response> {
  await keep(p, { accountId: account.id, epoch: account.authEpoch, step, ...(first ? { first } : {}) })
  return seeOther(links.mfaUrl)
}

/** A sign-in's per-account and per-address counters: a second factor shares the password's lockout. */
const signInKeys = (p: PageRequest, email: string) => {
  const lock = accountLockRule(p.instance.policy)
  const ip: AttemptEntry = ['signInAddress', instanceKey(p.instance.id, p.clientIp)]
  const account: AttemptEntry | null = lock
    ? ['signInAccount', instanceKey(p.instance.id, email), lock]
    : null
  return { ip, account, all: account ? [account, ip] : [ip] }
}

function ChallengePage(p: {
  action: string
  factors: MfaSummary
  passkeyOptions: unknown | null
  signInUrl: string
  error?: string | null
}) {
  return (
    <Layout title="Two-step verification">
      <h1>Two-step verification</h1>
      <Alert kind="error" message={p.error} />
      {p.factors.totp ? (
        <form method="post" action={p.action}>
          <CodeField />
          <button type="submit">Verify</button>
        </form>
      ) : (
        ''
      )}
      {p.passkeyOptions ? (
        <PasskeyForm action={p.action} mode="get" options={p.passkeyOptions} label="Use a passkey" />
      ) : (
        ''
      )}
      <div class="links">
        <a href={p.signInUrl}>Use another account</a>
      </div>
    </Layout>
  )
}

function EnrolPage(p: {
  action: string
  totp: Parameters<typeof TotpSetup>[0]['enrolment'] | null
  passkeyOptions: unknown
  error?: string | null
}) {
  return (
    <Layout title="Set up two-step verification">
      <h1>Set up two-step verification</h1>
      <p class="sub">This account needs a second step to sign in.</p>
      <Alert kind="error" message={p.error} />
      {p.totp ? <TotpSetup enrolment={p.totp} action={p.action} /> : ''}
      <p class="hint">Or use a passkey (this device or a security key):</p>
      <PasskeyForm action={p.action} mode="create" options={p.passkeyOptions} label="Set up a passkey" />
    </Layout>
  )
}

const ContinueForm = (action: string) => (
  <form method="post" action={action}>
    <input type="hidden" name="continue" value="1" />
    <button type="submit">Continue</button>
  </form>
)

/** `/interaction/<uid>/mfa`: the second step of a sign-in whose password was right; `form` is a post's. */
export async function mfaStep(
  c: PageContext,
  p: PageRequest,
  details: InteractionDetails,
  links: InteractionLinks,
  form: MfaForm | null,
): Promise<Response> {
  const pending = pendingOf(details)
  const account = pending ? await findAccount(c.core, p.instance.id, pending.accountId) : undefined
  // Gone, or signed out everywhere since (a password change, an MFA reset): the sign-in starts over.
  if (!pending || !account || account.authEpoch !== pending.epoch) {
    return seeOther(links.signInUrl)
  }
  if (pending.step === 'enrolled') {
    if (form?.continue) {
      await c.core.limiter.forget('signInAccount', instanceKey(p.instance.id, account.email))
      return finishWith(c, p, account, pending.amr ?? [...firstAmr(pending), 'otp'], pending)
    }
    return hostedHtml(
      <Layout title="Two-step verification">
        <h1>Two-step verification is on</h1>
        {ContinueForm(links.mfaUrl)}
      </Layout>,
    )
  }
  // A factor set up meanwhile (elsewhere) is proved, not replaced by another enrolment.
  if (pending.step === 'enrol' && !hasSecondFactor(await accountFactors(c.core, p.instance.id, account.id)))
    return enrol(c, p, pending, account, links, form)
  return challenge(c, p, pending, account, links, form)
}

async function challenge(
  c: PageContext,
  p: PageRequest,
  pending: MfaPending,
  account: Account,
  links: InteractionLinks,
  form: MfaForm | null,
): Promise<Response> {
  const { core } = c
  const factors = await accountFactors(core, p.instance.id, account.id)
  const page = async (status: number, error?: string) =>
    hostedHtml(
      ChallengePage({
        action: links.mfaUrl,
        factors,
        passkeyOptions:
          factors.passkeys > 0 ? await authenticationOptions(core, p.instance.id, account.id) : null,
        signInUrl: links.signInUrl,
        error,
      }),
      status,
    )
  if (!form) return page(200)
  const keys = signInKeys(p, account.email)
  const wait = waitOf(await c.core.limiter.takeAll(keys.all))
  if (wait > 0) return page(429, `Too many failed sign-in attempts. Try again in ${minutesText(wait)}.`)
  let amr: Amr[] | null = null
  const { credential } = form
  if (credential) {
    const checked = await verifyPasskey(core, p.instance.id, credential, account.id)
    if (checked.ok) amr = [...firstAmr(pending), checked.amr]
  } else {
    const code = (form.code ?? '').trim()
    const ok = await core.store.tx(
      async (tx) =>
        (await useTotpCode(tx, core, account.id, code, { confirm: false })) ||
        (await useRecoveryCode(tx, core, account.id, code)),
    )
    if (ok) amr = [...firstAmr(pending), 'otp']
  }
  if (!amr) {
    await c.core.limiter.fail(keys.all)
    return page(
      401,
      credential ? 'That passkey could not be verified.' : 'That code is not right, or was used already.',
    )
  }
  // The address's slot is given back, never its failures forgotten; the account's are.
  await c.core.limiter.release([keys.ip])
  await c.core.limiter.forget('signInAccount', instanceKey(p.instance.id, account.email))
  return finishWith(c, p, account, amr, pending)
}

async function enrol(
  c: PageContext,
  p: PageRequest,
  pending: MfaPending,
  account: Account,
  links: InteractionLinks,
  form: MfaForm | null,
): Promise<Response> {
  const { core } = c
  const label = await instanceLabel(core, c.extensions, p.instance.id)
  const page = async (status: number, error?: string) =>
    hostedHtml(
      EnrolPage({
        action: links.mfaUrl,
        totp: await startTotpEnrolment(core, account, label),
        passkeyOptions: await registrationOptions(core, account, label),
        error,
      }),
      status,
    )
  if (!form) return page(200)
  const { credential } = form
  if (credential) {
    const kind = await registerPasskey(core, account, credential)
    if (!kind) return page(422, 'The passkey could not be set up. Try again.')
    await c.core.limiter.forget('signInAccount', instanceKey(p.instance.id, account.email))
    return finishWith(c, p, account, [...firstAmr(pending), kind], pending)
  }
  const code = (form.code ?? '').trim()
  const codes = await core.store.tx(async (tx) =>
    (await useTotpCode(tx, core, account.id, code, { confirm: true }))
      ? issueRecoveryCodes(tx, core, account)
      : null,
  )
  if (!codes) return page(422, 'That code is not right. Check the time on your device and try again.')
  await keep(p, { ...pending, step: 'enrolled', amr: [...firstAmr(pending), 'otp'] })
  return hostedHtml(RecoveryCodesPage({ codes, next: ContinueForm(links.mfaUrl) }))
}

/**
 * `/interaction/<uid>/passkey`: a sign-in with a passkey alone (a discoverable credential, verified
 * user); `form` is a post's.
 */
export async function passkeySignIn(
  c: PageContext,
  p: PageRequest,
  links: InteractionLinks,
  form: PasskeySignInForm | null,
): Promise<Response> {
  const { core } = c
  const action = links.passkeyUrl
  if (!action) throw new AppError('PASSKEYS_OFF', 404, 'Passkeys are not available here.')
  const page = async (status: number, error?: string) =>
    hostedHtml(
      <Layout title="Sign in with a passkey">
        <h1>Sign in with a passkey</h1>
        <p class="sub">
          to continue to <strong safe>{links.appName}</strong>
        </p>
        <Alert kind="error" message={error} />
        <PasskeyForm
          action={action}
          mode="get"
          options={await authenticationOptions(core, p.instance.id, null)}
          label="Continue with a passkey"
        />
        <div class="links">
          <a href={links.signInUrl}>Sign in with a password</a>
        </div>
      </Layout>,
      status,
    )
  if (!form) return page(200)
  const ipKey: AttemptEntry = ['signInAddress', instanceKey(p.instance.id, p.clientIp)]
  const wait = waitOf(await c.core.limiter.takeAll([ipKey]))
  if (wait > 0) return page(429, `Too many failed sign-in attempts. Try again in ${minutesText(wait)}.`)
  const checked = await verifyPasskey(core, p.instance.id, form.credential, null)
  const account = checked.accountId ? await findAccount(core, p.instance.id, checked.accountId) : undefined
  // The account's lock holds for its passkeys too; a failed check counts on it.
  const lock = accountLockRule(p.instance.policy)
  const acctKey: AttemptEntry | null =
    account && lock ? ['signInAccount', instanceKey(p.instance.id, account.email), lock] : null
  if (acctKey) {
    const locked = waitOf(await c.core.limiter.takeAll([acctKey]))
    if (locked > 0) {
      await c.core.limiter.release([ipKey])
      return page(429, `Too many failed sign-in attempts. Try again in ${minutesText(locked)}.`)
    }
  }
  if (!checked.ok || !account) {
    await c.core.limiter.fail(acctKey ? [ipKey, acctKey] : [ipKey])
    return page(401, 'That passkey could not be verified.')
  }
  await c.core.limiter.release([ipKey])
  await c.core.limiter.forget('signInAccount', instanceKey(p.instance.id, account.email))
  // As after a password: no code for an address the policy wants proven first.
  if (p.instance.policy.requireEmailVerification && !account.emailVerified) {
    return askToVerify(c, p, account, links, [checked.amr])
  }
  return finishLogin(c, p, account, [checked.amr])
}
