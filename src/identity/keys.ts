import { randomBytes } from 'node:crypto'
import { eq } from 'drizzle-orm'
import { createLocalJWKSet, exportJWK, generateKeyPair } from 'jose'
import type { Core } from '../core'
import { instanceKeys, instanceSecrets } from './schema'

export interface InstanceKeyMaterial {
  /** Private JWKs for oidc-provider's `jwks` (RS256 first: the id_token default). */
  jwks: { keys: Record<string, unknown>[] }
  cookieKeys: string[]
}

const ALGS = ['RS256', 'ES256'] as const

/** Creates the instance's signing keys and cookie keys once; idempotent (provisioning may re-run). */
export async function ensureInstanceKeys(core: Core, instanceId: string): Promise<void> {
  const existing = core.db
    .select({ alg: instanceKeys.alg })
    .from(instanceKeys)
    .where(eq(instanceKeys.instanceId, instanceId))
    .all()
  const now = core.clock.now()
  for (const alg of ALGS) {
    if (existing.some((k) => k.alg === alg)) continue
    const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true })
    const kid = `${alg.toLowerCase()}-${randomBytes(8).toString('hex')}`
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' }
    const privateJwk = { ...(await exportJWK(privateKey)), kid, alg, use: 'sig' }
    core.db
      .insert(instanceKeys)
      .values({
        kid,
        instanceId,
        alg,
        publicJwk: publicJwk as JsonWebKey,
        privateJwkSealed: core.secrets.seal(JSON.stringify(privateJwk), `instance-key:${kid}`),
        createdAt: now,
      })
      .run()
  }
  const cookieKeys = [randomBytes(32).toString('base64url'), randomBytes(32).toString('base64url')]
  core.db
    .insert(instanceSecrets)
    .values({
      instanceId,
      cookieKeysSealed: core.secrets.seal(JSON.stringify(cookieKeys), `cookie-keys:${instanceId}`),
      createdAt: now,
    })
    .onConflictDoNothing()
    .run()
}

export function loadInstanceKeys(core: Core, instanceId: string): InstanceKeyMaterial | null {
  const rows = core.db.select().from(instanceKeys).where(eq(instanceKeys.instanceId, instanceId)).all()
  const secrets = core.db
    .select()
    .from(instanceSecrets)
    .where(eq(instanceSecrets.instanceId, instanceId))
    .get()
  if (rows.length === 0 || !secrets) return null
  rows.sort(
    (a, b) => ALGS.indexOf(a.alg as never) - ALGS.indexOf(b.alg as never) || a.createdAt - b.createdAt,
  )
  return {
    jwks: {
      keys: rows.map((r) => JSON.parse(core.secrets.open(r.privateJwkSealed, `instance-key:${r.kid}`))),
    },
    cookieKeys: JSON.parse(core.secrets.open(secrets.cookieKeysSealed, `cookie-keys:${instanceId}`)),
  }
}

/** Public keys only, for local verification of tokens the instance issued. */
export function publicJwks(core: Core, instanceId: string): { keys: JsonWebKey[] } {
  return {
    keys: core.db
      .select({ jwk: instanceKeys.publicJwk })
      .from(instanceKeys)
      .where(eq(instanceKeys.instanceId, instanceId))
      .all()
      .map((r) => r.jwk),
  }
}

/** A jose key set over the instance's public keys, to verify tokens it issued without HTTP. */
export const localJwks = (core: Core, instanceId: string) =>
  createLocalJWKSet(publicJwks(core, instanceId) as never)
