import { randomBytes } from 'node:crypto'
import { eq, sql } from 'drizzle-orm'
import { createLocalJWKSet, exportJWK, generateKeyPair } from 'jose'
import type { Core } from '../core'
import { preparedRead } from '../db/prepared'
import type { Conn } from '../db/store'
import { instanceKeys, instanceSecrets } from './schema'

export interface InstanceKeyMaterial {
  /** Private JWKs for oidc-provider's `jwks` (RS256 first: the id_token default). */
  jwks: { keys: Record<string, unknown>[] }
  cookieKeys: string[]
}

const ALGS = ['RS256', 'ES256'] as const

const algsOf = async (conn: Conn, instanceId: string) =>
  new Set(
    (
      await conn.db
        .select({ alg: instanceKeys.alg })
        .from(instanceKeys)
        .where(eq(instanceKeys.instanceId, instanceId))
    ).map((k) => k.alg),
  )

async function hasSecrets(conn: Conn, instanceId: string): Promise<boolean> {
  const [row] = await conn.db
    .select({ instanceId: instanceSecrets.instanceId })
    .from(instanceSecrets)
    .where(eq(instanceSecrets.instanceId, instanceId))
    .limit(1)
  return row !== undefined
}

/**
 * Creates the instance's signing keys (one per alg) and cookie keys once; idempotent (provisioning
 * may re-run). Nodes may run it for the same instance at once: keys are made outside the
 * transaction (generating one is slow), then written under the instance's lock, only for the algs
 * still missing once it is held; the loser's keys are dropped, and the cookie keys go in only when
 * the instance has none. Every node then reads the same rows.
 */
export async function ensureInstanceKeys(core: Core, instanceId: string): Promise<void> {
  const existing = await algsOf(core.store, instanceId)
  const missing = ALGS.filter((alg) => !existing.has(alg))
  if (missing.length === 0 && (await hasSecrets(core.store, instanceId))) return
  const now = core.clock.now()
  const made = await Promise.all(
    missing.map(async (alg) => {
      const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true })
      const kid = `${alg.toLowerCase()}-${randomBytes(8).toString('hex')}`
      const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' }
      const privateJwk = { ...(await exportJWK(privateKey)), kid, alg, use: 'sig' }
      return {
        kid,
        instanceId,
        alg,
        publicJwk: publicJwk as JsonWebKey,
        privateJwkSealed: core.secrets.seal(JSON.stringify(privateJwk), `instance-key:${kid}`),
        createdAt: now,
      }
    }),
  )
  const cookieKeys = [randomBytes(32).toString('base64url'), randomBytes(32).toString('base64url')]
  const cookieKeysSealed = core.secrets.seal(JSON.stringify(cookieKeys), `cookie-keys:${instanceId}`)
  await core.store.tx(async (tx) => {
    await tx.serialize(`instance-keys:${instanceId}`)
    const present = await algsOf(tx, instanceId)
    const rows = made.filter((key) => !present.has(key.alg))
    if (rows.length > 0) await tx.db.insert(instanceKeys).values(rows)
    await tx.db
      .insert(instanceSecrets)
      .values({ instanceId, cookieKeysSealed, createdAt: now })
      .onConflictDoNothing({ target: instanceSecrets.instanceId })
  })
}

// Read by every instance a node loads (prepared.ts).
// What the load uses, not the public JWK (a JSON column parsed per row, of ~0.5 KiB): the public
// document is made from the opened private keys (provider/served.ts).
const keysOf = preparedRead((db) =>
  db
    .select({
      kid: instanceKeys.kid,
      alg: instanceKeys.alg,
      privateJwkSealed: instanceKeys.privateJwkSealed,
      createdAt: instanceKeys.createdAt,
    })
    .from(instanceKeys)
    .where(eq(instanceKeys.instanceId, sql.placeholder('instanceId')))
    .prepare('instance_keys_of'),
)
const secretsOf = preparedRead((db) =>
  db
    .select({ cookieKeysSealed: instanceSecrets.cookieKeysSealed })
    .from(instanceSecrets)
    .where(eq(instanceSecrets.instanceId, sql.placeholder('instanceId')))
    .limit(1)
    .prepare('instance_secrets_of'),
)

export async function loadInstanceKeys(core: Core, instanceId: string): Promise<InstanceKeyMaterial | null> {
  const [rows, [secrets]] = await Promise.all([
    keysOf(core.db).execute({ instanceId }),
    secretsOf(core.db).execute({ instanceId }),
  ])
  if (rows.length === 0 || !secrets) return null
  // The same order on every node: by alg, then age, then kid.
  rows.sort(
    (a, b) =>
      ALGS.indexOf(a.alg as never) - ALGS.indexOf(b.alg as never) ||
      a.createdAt - b.createdAt ||
      (a.kid < b.kid ? -1 : a.kid > b.kid ? 1 : 0),
  )
  return {
    jwks: {
      keys: rows.map((r) => JSON.parse(core.secrets.open(r.privateJwkSealed, `instance-key:${r.kid}`))),
    },
    cookieKeys: JSON.parse(core.secrets.open(secrets.cookieKeysSealed, `cookie-keys:${instanceId}`)),
  }
}

/** Public keys only, for local verification of tokens the instance issued. */
export async function publicJwks(core: Core, instanceId: string): Promise<{ keys: JsonWebKey[] }> {
  const rows = await core.db
    .select({ jwk: instanceKeys.publicJwk })
    .from(instanceKeys)
    .where(eq(instanceKeys.instanceId, instanceId))
  return { keys: rows.map((r) => r.jwk) }
}

type LocalKeySet = ReturnType<typeof createLocalJWKSet>

/**
 * A jose key resolver over the instance's public keys, to verify tokens it issued without HTTP.
 * The keys are read on its first use and kept; a read that failed, or found no keys yet, is
 * done again on the next use.
 */
export function localJwks(
  core: Core,
  instanceId: string,
): (...args: Parameters<LocalKeySet>) => Promise<CryptoKey> {
  let keySet: Promise<LocalKeySet> | null = null
  const load = (): Promise<LocalKeySet> => {
    const loading = publicJwks(core, instanceId).then((jwks) => {
      if (jwks.keys.length === 0 && keySet === loading) keySet = null
      return createLocalJWKSet(jwks as never)
    })
    loading.catch(() => {
      if (keySet === loading) keySet = null
    })
    keySet = loading
    return loading
  }
  return async (...args) => (await (keySet ?? load()))(...args)
}
