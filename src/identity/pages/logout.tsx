import type { Configuration } from 'oidc-provider'
import type { Core } from '../../core'
import { cspHash } from '../../shared/security-headers'
import { Layout } from '../../shared/views/hosted-layout'
import { findAccount, userEventData } from '../accounts'
import { PLATFORM } from '../instances'
import type { AfterRoute } from '../provider/after-route'
import { current } from '../provider/instance-scope'
import { DonePage } from './components'
import { render } from './http'

/** Confirms an RP-initiated logout without another click; allowed by its hash in the identity CSP. */
const AUTO_LOGOUT_SCRIPT = 'document.getElementById("confirm-logout").click()'
export const AUTO_LOGOUT_SCRIPT_HASH = cspHash(AUTO_LOGOUT_SCRIPT)

function LogoutPage(p: { safeForm: string; auto: boolean }) {
  const { safeForm } = p
  return (
    <Layout title="Signing out">
      <h1>Signing you out…</h1>
      {safeForm}
      <button type="submit" form="op.logoutForm" name="logout" value="yes" id="confirm-logout">
        Sign out
      </button>
      <button type="submit" form="op.logoutForm" class="link">
        Stay signed in
      </button>
      {/* The RP proved the logout with an id_token_hint: confirm it without another click. */}
      {p.auto ? <script>{AUTO_LOGOUT_SCRIPT}</script> : ''}
    </Layout>
  )
}

type Logout = NonNullable<NonNullable<Configuration['features']>['rpInitiatedLogout']>

/** RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0 §2), as oidc-provider's page sources. */
export const logoutPages: Pick<Logout, 'logoutSource' | 'postLogoutSuccessSource'> = {
  logoutSource: (ctx, form) =>
    render(ctx, LogoutPage({ safeForm: form, auto: Boolean(ctx.oidc.params?.id_token_hint) })),
  postLogoutSuccessSource: (ctx) =>
    render(ctx, DonePage({ title: 'Signed out', message: 'You have been signed out.' })),
}

/**
 * The logout half of `session.ended` (SPEC "Events"; expiry is the other, purge.ts): a step
 * that runs after oidc-provider's end_session confirmation and records the event when
 * that destroyed a signed-in session of a workspace instance ("Sign out", not "Stay signed in",
 * which only ends the one client's part). Awaited before the answer goes out.
 */
export function logoutEvents(core: Core): AfterRoute {
  return (ctx) => {
    if (ctx.oidc?.route !== 'end_session_confirm') return
    const instanceId = current().id
    const session = ctx.oidc.session as { accountId?: string; destroyed?: boolean } | undefined
    if (instanceId === PLATFORM || !session?.destroyed || !session.accountId) return
    return sessionEnded(core, instanceId, session.accountId)
  }
}

async function sessionEnded(core: Core, instanceId: string, accountId: string): Promise<void> {
  const account = await findAccount(core, instanceId, accountId)
  if (account) await core.emit('session.ended', instanceId, userEventData(account))
}
