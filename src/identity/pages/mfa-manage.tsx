import { AppError } from '../../shared/errors'
import { Alert } from '../../shared/views/components'
import { Layout } from '../../shared/views/hosted-layout'
import { type Account, findAccount } from '../accounts'
import { hostedHtml } from '../engine/hosted'
import { issuerFor } from '../instances'
import { accountFactors, type MfaSummary } from '../mfa/factors'
import { instanceLabel } from '../mfa/instance-label'
import { registerPasskey, registrationOptions } from '../mfa/passkeys'
import { issueRecoveryCodes } from '../mfa/recovery'
import { startTotpEnrolment, type TotpEnrolment, useTotpCode } from '../mfa/totp'
import { DonePage } from './components'
import type { ManageMfaForm } from './forms'
import type { PageContext, PageRequest } from './http'
import { PasskeyForm, RecoveryCodesPage, TotpSetup } from './mfa-views'

/** Changes to an account's factors need a sign-in this recent: a session left open is not enough. */
const RECENT_SIGN_IN_MS = 15 * 60_000

function ManagePage(p: {
  action: string
  factors: MfaSummary
  totp: TotpEnrolment | null
  passkeyOptions: unknown
  ok?: string | null
  error?: string | null
}) {
  return (
    <Layout title="Two-step verification">
      <h1>Two-step verification</h1>
      <Alert kind="ok" message={p.ok} />
      <Alert kind="error" message={p.error} />
      <p id="mfa-status">
        Authenticator app: {p.factors.totp ? 'on' : 'off'}. Passkeys: {p.factors.passkeys}.
      </p>
      {p.totp ? (
        <>
          <h2>Authenticator app</h2>
          <TotpSetup enrolment={p.totp} action={p.action} />
        </>
      ) : (
        ''
      )}
      <h2>Passkeys</h2>
      <PasskeyForm action={p.action} mode="create" options={p.passkeyOptions} label="Add a passkey" />
    </Layout>
  )
}

/**
 * The account signed in at this instance (its oidc-provider session), and whether that sign-in is
 * recent; null without a session.
 */
async function signedIn(
  c: PageContext,
  p: PageRequest,
): Promise<{ account: Account; recent: boolean } | null> {
  const session = await p.interaction.session()
  if (!session.accountId) return null
  const account = await findAccount(c.core, p.instance.id, session.accountId)
  if (!account) return null
  const loginMs = (session.loginTs ?? 0) * 1000
  return { account, recent: c.core.clock.now() - loginMs <= RECENT_SIGN_IN_MS }
}

/**
 * Whether a post comes from the instance's own pages. `Sec-Fetch-Site` says so whatever the
 * referrer policy (the plane's `no-referrer` makes a browser send `Origin: null` with a form);
 * an `Origin` other than null must be the issuer's. A browser that sends neither still sends the
 * session cookie (SameSite=Lax) only with same-site posts.
 */
function sameOrigin(p: PageRequest, origin: string): boolean {
  const site = p.headers.get('sec-fetch-site') ?? undefined
  if (site !== undefined && site !== 'same-origin') return false
  const from = p.headers.get('origin') ?? undefined
  return from === undefined || from === 'null' || from === origin
}

/**
 * `/mfa`: the signed-in user's two-step verification at the instance: set up an authenticator app
 * (its recovery codes shown once) and add passkeys. Apps link their users here. A post must come
 * from the instance's own origin (its cookies are SameSite=Lax too) and follow a recent sign-in.
 * `form` is a post's (null for the page).
 */
export async function manageMfa(
  c: PageContext,
  p: PageRequest,
  form: ManageMfaForm | null,
): Promise<Response> {
  const { core } = c
  if (p.instance.policy.mfa === 'off')
    throw new AppError('MFA_OFF', 404, 'Two-step verification is not available here.')
  const who = await signedIn(c, p)
  if (!who)
    throw new AppError('NOT_SIGNED_IN', 401, 'Sign in to the application first, then come back to this page.')
  const { account } = who
  const action = `${p.prefix}/mfa`
  const label = await instanceLabel(core, c.extensions, p.instance.id)
  const page = async (status: number, message: { ok?: string; error?: string } = {}) =>
    hostedHtml(
      ManagePage({
        action,
        factors: await accountFactors(core, p.instance.id, account.id),
        // A secret or a challenge only for a recent sign-in: a session left open shows none.
        totp: who.recent ? await startTotpEnrolment(core, account, label) : null,
        passkeyOptions: who.recent ? await registrationOptions(core, account, label) : null,
        ...message,
      }),
      status,
    )
  const stale = { error: 'Sign in again to change two-step verification: your sign-in is too old.' }
  if (!form) return who.recent ? page(200) : page(403, stale)
  if (!sameOrigin(p, new URL(issuerFor(core.config, p.instance.id)).origin))
    throw new AppError('BAD_ORIGIN', 403, 'This form was sent from another site.')
  if (!who.recent) return page(403, stale)
  const { credential } = form
  if (credential) {
    const kind = await registerPasskey(core, account, credential)
    if (!kind) return page(422, { error: 'The passkey could not be set up. Try again.' })
    return hostedHtml(DonePage({ title: 'Passkey added', message: 'You can sign in with this passkey now.' }))
  }
  const code = (form.code ?? '').trim()
  const codes = await core.store.tx(async (tx) =>
    (await useTotpCode(tx, core, account.id, code, { confirm: true }))
      ? issueRecoveryCodes(tx, core, account)
      : null,
  )
  if (!codes)
    return page(422, { error: 'That code is not right. Check the time on your device and try again.' })
  return hostedHtml(
    RecoveryCodesPage({
      codes,
      next: (
        <p>
          <a href={action}>Done</a>
        </p>
      ),
    }),
  )
}
