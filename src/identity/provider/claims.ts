import type { Configuration } from 'oidc-provider'
import type { Core } from '../../core'
import { findAccount } from '../accounts'
import type { IdentityDeps } from '../deps'
import { PLATFORM } from '../instances'
import { AUTH_EPOCH_CLAIM } from '../platform-tokens'
import { current } from './served'

/**
 * Which claims each scope releases (OpenID Connect Core §5.4). `amr` (§2, RFC 8176) rides on
 * `openid`: oidc-provider puts the methods the sign-in recorded (finish-login.ts) into the ID token
 * only for a claim some scope releases.
 */
export const CLAIMS: Configuration['claims'] = {
  openid: ['sub', 'amr'],
  email: ['email', 'email_verified'],
  profile: ['name'],
  // DESIGN "Tenants": the slugs of the tenants the user belongs to.
  tenants: ['tenants'],
}

/**
 * The accounts of the served instance as oidc-provider sees them: an id and the claims above.
 * `tenants` is asked of the tenants feature only when the scope that releases it was granted.
 */
export const accountFinder =
  (core: Core, deps: Pick<IdentityDeps, 'tenantsOf'>): Configuration['findAccount'] =>
  async (_ctx, sub) => {
    const instanceId = current().id
    const account = await findAccount(core, instanceId, sub)
    if (!account) return undefined
    return {
      accountId: account.id,
      claims: async (_use, scope) => ({
        sub: account.id,
        email: account.email,
        email_verified: account.emailVerified,
        name: account.name || undefined,
        tenants:
          deps.tenantsOf && instanceId !== PLATFORM && scope.split(' ').includes('tenants')
            ? await deps.tenantsOf(instanceId, account.id)
            : undefined,
      }),
    }
  }

/** Platform access tokens carry the account's epoch: a password change refuses earlier ones. */
export const extraTokenClaims =
  (core: Core): Configuration['extraTokenClaims'] =>
  (_ctx, token) => {
    const instanceId = current().id
    const accountId = 'accountId' in token ? token.accountId : undefined
    // Synchronous for every other token (a workspace's, a client's own): no promise to await.
    if (instanceId !== PLATFORM || !accountId) return undefined
    return findAccount(core, instanceId, accountId).then((account) =>
      account ? { [AUTH_EPOCH_CLAIM]: account.authEpoch } : undefined,
    )
  }
