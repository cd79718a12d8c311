import { importJWK, type JWTPayload, jwtVerify, SignJWT } from 'jose'
import { LRUCache } from 'lru-cache'
import type { Core } from '../core'
import { type Account, findAccount } from './accounts'
import { loadInstanceKeys, localJwks } from './engine/keys'
import { issuerFor, PLATFORM } from './instances'
import { controlPlaneAudience } from './platform-clients'

/** The claim of platform access tokens that names the account's `auth_epoch` at issue. */
export const AUTH_EPOCH_CLAIM = 'auth_epoch'

/** A machine key's access token names its key as `sub` = `key:<key id>` (DESIGN "Machine keys"). */
const KEY_SUBJECT = 'key:'

/** What a machine key's access token carries: its key, its workspace, the scopes granted. */
export interface MachineGrant {
  keyId: string
  workspaceId: string
  scopes: string[]
}

/** What a valid platform access token stands for: a person's account, or a machine key's grant. */
export type PlatformCaller = { account: Account } | { machine: MachineGrant }

/**
 * Verifies platform access tokens (RFC 9068 JWTs for the control plane's audience) locally, against
 * the platform's public keys: the account they stand for, or the machine key's grant; null when the
 * token is invalid, expired (on core.clock), or older than the account's last password change.
 */
export function createPlatformTokenVerifier(core: Core): (token: string) => Promise<PlatformCaller | null> {
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
  // A token verified once is not verified again while it lives: the signature check is most of an
  // API call's cost. Only what is fixed by the signature is kept; the account is read every time.
  const verified = new LRUCache<string, JWTPayload>({ max: 2000 })
  core.instances.subscribe((instanceId) => {
    if (instanceId === null || instanceId === PLATFORM) verified.clear()
  })
  const verify = async (token: string): Promise<JWTPayload> => {
    const now = core.clock.now()
    const known = verified.get(token)
    if (known && typeof known.exp === 'number' && known.exp * 1000 > now) return known
    const { payload } = await jwtVerify(token, keySet(), {
      issuer,
      audience,
      algorithms: ['ES256', 'RS256'],
      currentDate: new Date(now),
    })
    verified.set(token, payload)
    return payload
  }
  return async (token) => {
    try {
      const payload = await verify(token)
      if (typeof payload.sub !== 'string') return null
      if (payload.sub.startsWith(KEY_SUBJECT)) {
        const { workspace_id: workspaceId, scope } = payload
        if (typeof workspaceId !== 'string' || typeof scope !== 'string') return null
        return {
          machine: { keyId: payload.sub.slice(KEY_SUBJECT.length), workspaceId, scopes: scope.split(' ') },
        }
      }
      const account = await findAccount(core, PLATFORM, payload.sub)
      // A token without the claim is from epoch 0.
      if (!account || (payload[AUTH_EPOCH_CLAIM] ?? 0) !== account.authEpoch) return null
      return { account }
    } catch {
      return null
    }
  }
}

/**
 * Issues a machine key's access token (RFC 9068 §2): a JWT signed with the platform instance's ES256
 * key, for the control plane's audience, `sub` = `key:<key id>`, with the workspace and the scopes
 * granted, living `ttlSeconds` from now on core.clock.
 */
export function createMachineTokenIssuer(
  core: Core,
): (grant: MachineGrant, ttlSeconds: number) => Promise<string> {
  const issuer = issuerFor(core.config, PLATFORM)
  const audience = controlPlaneAudience(core)
  let signing: Promise<{ key: CryptoKey | Uint8Array; kid: string }> | null = null
  const signingKey = () => {
    signing ??= loadInstanceKeys(core, PLATFORM).then(async (material) => {
      const es256 = material?.keys.find((k) => k.publicJwk.alg === 'ES256')
      if (!es256) throw new Error('the platform instance has no ES256 key')
      return {
        key: await importJWK((await es256.openPrivate()) as never, 'ES256'),
        kid: String(es256.publicJwk.kid),
      }
    })
    signing.catch(() => {
      signing = null
    })
    return signing
  }
  core.instances.subscribe((instanceId) => {
    if (instanceId === null || instanceId === PLATFORM) signing = null
  })
  return async ({ keyId, workspaceId, scopes }, ttlSeconds) => {
    const { key, kid } = await signingKey()
    const now = Math.floor(core.clock.now() / 1000)
    return new SignJWT({ workspace_id: workspaceId, scope: scopes.join(' '), client_id: keyId })
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid })
      .setIssuer(issuer)
      .setAudience(audience)
      .setSubject(`${KEY_SUBJECT}${keyId}`)
      .setIssuedAt(now)
      .setExpirationTime(now + ttlSeconds)
      .setJti(crypto.randomUUID())
      .sign(key)
  }
}
