import type { Configuration } from 'oidc-provider'
import type { Core } from '../../core'
import { findAccount } from '../accounts'
import type { ClaimSource } from '../engine/extension'
import { ENGINE_CLAIMS } from '../engine/reserved'
import { PLATFORM } from '../instances'
import { AUTH_EPOCH_CLAIM } from '../platform-tokens'
import { current } from './instance-scope'

/**
 * Which claims each scope releases (OpenID Connect Core §5.4), the features' scopes after the
 * engine's own. `amr` (§2, RFC 8176) rides on `openid`: oidc-provider puts the methods the sign-in
 * recorded (finish-login.ts) into the ID token only for a claim some scope releases.
 */
export const claimsOf = (sources: readonly ClaimSource[]): NonNullable<Configuration['claims']> => ({
  ...ENGINE_CLAIMS,
  ...Object.fromEntries(sources.map((s) => [s.scope, s.claims])),
})

/**
 * The accounts of the served instance as oidc-provider sees them: an id and the claims above. A
 * feature's claims are read of it only on a workspace instance, and when the scope that releases
 * them was granted.
 */
export const accountFinder =
  (core: Core, sources: readonly ClaimSource[]): Configuration['findAccount'] =>
  async (_ctx, sub) => {
    const instanceId = current().id
    const account = await findAccount(core, instanceId, sub)
    if (!account) return undefined
    return {
      accountId: account.id,
      claims: async (_use, scope) => {
        const granted = new Set(scope.split(' '))
        const extended =
          instanceId === PLATFORM
            ? []
            : await Promise.all(
                sources.filter((s) => granted.has(s.scope)).map((s) => s.read(instanceId, account.id)),
              )
        // The engine's own last: a feature's claims never stand in for them.
        return Object.assign({}, ...extended, {
          sub: account.id,
          email: account.email,
          email_verified: account.emailVerified,
          name: account.name || undefined,
        })
      },
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
