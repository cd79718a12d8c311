import { jwtVerify } from 'jose'
import type { Core } from '../core'
import { type Account, findAccount } from './accounts'
import { issuerFor, PLATFORM } from './instances'
import { localJwks } from './keys'
import { controlPlaneAudience } from './platform'

/** The claim of platform access tokens that names the account's `auth_epoch` at issue. */
export const AUTH_EPOCH_CLAIM = 'auth_epoch'

/**
 * Verifies platform access tokens (RFC 9068 JWTs for the control plane's audience) locally, against
 * the platform's public keys: the account they stand for, or null when the token is invalid,
 * expired (on core.clock), or older than the account's last password change.
 */
export function createPlatformTokenVerifier(core: Core): (token: string) => Promise<Account | null> {
  const issuer = issuerFor(core.config, PLATFORM)
  const audience = controlPlaneAudience(core)
  let jwks: ReturnType<typeof localJwks> | null = null
  const keySet = () => {
    jwks ??= localJwks(core, PLATFORM)
    return jwks
  }
  // The key set is a view of the platform instance's rows: dropped with the others.
  core.instances.subscribe((instanceId) => {
    if (instanceId === null || instanceId === PLATFORM) jwks = null
  })
  return async (token) => {
    try {
      const { payload } = await jwtVerify(token, keySet(), {
        issuer,
        audience,
        algorithms: ['ES256', 'RS256'],
        currentDate: new Date(core.clock.now()),
      })
      const account =
        typeof payload.sub === 'string' ? await findAccount(core, PLATFORM, payload.sub) : undefined
      // A token without the claim is from epoch 0.
      if (!account || (payload[AUTH_EPOCH_CLAIM] ?? 0) !== account.authEpoch) return null
      return account
    } catch {
      return null
    }
  }
}
