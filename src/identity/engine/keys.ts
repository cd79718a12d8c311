import { generateKeyPair, randomBytes } from 'node:crypto'
import { promisify } from 'node:util'
import { and, eq, sql } from 'drizzle-orm'
import { createLocalJWKSet } from 'jose'
import type { Core } from '../../core'
import { inStrings, type ListSize, listParam, listSize } from '../../db/in-strings'
import { preparedRead } from '../../db/prepared'
import type { Conn, Dialect } from '../../db/store'
import type { WorkspaceState } from '../deps'
import { instanceKeys, instanceSecrets } from '../schema'
import { servingState } from './instance-states'
import { coalesced } from './read-batching'

/** One signing key of an instance as loaded: its public half, its private half still sealed. */
export interface InstanceKey {
  /** The stored public JWK: kid, alg, use and the public members (what the jwks endpoint lists). */
  publicJwk: Record<string, unknown>
  /** Opens the private JWK (reading it first unless the load brought it sealed): on the key's first signature. */
  openPrivate: () => Promise<Record<string, unknown>>
}

export interface InstanceKeyMaterial {
  /** Its signing keys, RS256 first (the id_token default). */
  keys: InstanceKey[]
  /** Its cookie keys, opened on first use (a signed cookie) and then kept. */
  cookieKeys: () => string[]
}

const ALGS = ['RS256', 'ES256'] as const

const generateKeyPairOffThread = promisify(generateKeyPair)

/**
 * A new signing key pair as JWKs. node:crypto's callback form runs on a thread pool; WebCrypto's
 * (jose's generateKeyPair) runs on this thread, and an RSA key takes ~150 ms of it: with a worker's
 * jobs running side by side, another job's open transaction (and SQLite's write lock) waited behind
 * those keys for up to 0.7 s, and requests on the main thread behind it past the busy timeout.
 */
async function newSigningKeyPair(alg: (typeof ALGS)[number]) {
  const { publicKey, privateKey } =
    alg === 'RS256'
      ? await generateKeyPairOffThread('rsa', { modulusLength: 2048 })
      : await generateKeyPairOffThread('ec', { namedCurve: 'P-256' })
  return { publicJwk: publicKey.export({ format: 'jwk' }), privateJwk: privateKey.export({ format: 'jwk' }) }
}

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
      const pair = await newSigningKeyPair(alg)
      const kid = `${alg.toLowerCase()}-${randomBytes(8).toString('hex')}`
      const publicJwk = { ...pair.publicJwk, kid, alg, use: 'sig' }
      const privateJwk = { ...pair.privateJwk, kid, alg, use: 'sig' }
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

/** Clients a cold instance's load brings at most: the apps a workspace makes first. */
export const LOADED_CLIENTS = 4

/**
 * The largest client record a load brings (a few redirect URIs make ~0.5 KiB): the aggregate waits
 * in the instance's record for its first client lookup, and an instance asked only for discovery
 * keeps it. A larger app is read by id, when asked for.
 */
export const LOADED_RECORD_CHARS = 4096

/**
 * A cold instance's oldest clients, on its ES256 key's row (evaluated once per instance): the records
 * of the view instance_client_records (migration instance_client_records, the apps' face for the
 * plane), the same a read by id decodes, aggregated when read, in the snapshot that reads the keys.
 * So its first token reads no client of its own (on PostgreSQL the one statement left on a cold
 * instance's path), and what it trusts is as fresh as that read: nothing is kept beside the keys
 * for a write to race with. Any other client is read by id (clients.ts). The apps index is in
 * creation order (apps_workspace_idx): the LIMIT stops the search.
 */
const OLDEST_CLIENTS: Record<Dialect, string> = {
  postgres: `(SELECT json_agg(c.record ORDER BY c.created_at, c.id)::text FROM (SELECT r.record, r.created_at, r.id
      FROM instance_client_records r
      WHERE r.instance_id = s.instance_id AND length(r.record::text) <= ${LOADED_RECORD_CHARS}
      ORDER BY r.created_at, r.id LIMIT ${LOADED_CLIENTS}) c)`,
  sqlite: `(SELECT json_group_array(json(c.record)) FROM (SELECT r.record
      FROM instance_client_records r
      WHERE r.instance_id = s.instance_id AND length(r.record) <= ${LOADED_RECORD_CHARS}
      ORDER BY r.created_at, r.id LIMIT ${LOADED_CLIENTS}) c)`,
}

// Read by every instance a node loads: its keys and its cookie keys in one statement (a cold
// instance's reads cost 20-45 µs each on a large SQLite store, in caches other work has filled), one
// row per key with the instance's sealed cookie keys on each. Its ES256 key's private half comes with
// them, sealed (~0.3 KiB): it signs every JWT access token, so an instance's first token makes no
// read of its own (on PostgreSQL, one round trip fewer on its path). An RS256 one (~2.3 KiB) signs
// only ID tokens: read by its first signature, never by an instance that only issues
// client-credentials tokens. Its oldest few clients come on the ES256 row (OLDEST_CLIENTS). Nothing
// is opened here. One statement text per store and list size (db/in-strings.ts): several instances
// loaded at once share one read (`coalesced`). The list is asked of both tables: with only the
// join's condition, PostgreSQL without statistics yet (a fresh or bulk-loaded store) hashes a scan
// of every instance's keys (3.5 ms at 10,000 instances, not 0.1).
const MATERIAL_OF = (dialect: Dialect, size: ListSize) => `
  SELECT s.instance_id AS "instanceId", s.cookie_keys_sealed AS "cookieKeysSealed",
    s.serving, s.data_plane_rps AS "dataPlaneRps", k.kid, k.alg,
    k.public_jwk AS "publicJwk", k.created_at AS "createdAt",
    CASE WHEN k.alg = 'ES256' THEN k.private_jwk_sealed END AS "privateJwkSealed",
    CASE WHEN k.alg = 'ES256' THEN ${OLDEST_CLIENTS[dialect]} END AS clients
  FROM instance_secrets s LEFT JOIN instance_keys k
    ON k.instance_id = s.instance_id AND ${inStrings(dialect, 'k.instance_id', '$1', size)}
  WHERE ${inStrings(dialect, 's.instance_id', '$1', size)}`

interface MaterialRow {
  instanceId: string
  cookieKeysSealed: string
  serving: boolean | number
  dataPlaneRps: number | string | null
  kid: string | null
  alg: string | null
  /** The public JWK as stored (JSON text). */
  publicJwk: string | null
  createdAt: number | null
  privateJwkSealed: string | null
  /** JSON text of the instance's oldest clients' records, on its ES256 row; null on others, or none. */
  clients: string | null
}

/** Each core's read of instances' key rows: the rows of each instance asked, in the order asked. */
const materialReads = new WeakMap<Core, (instanceId: string) => Promise<MaterialRow[]>>()

function materialOf(core: Core): (instanceId: string) => Promise<MaterialRow[]> {
  let read = materialReads.get(core)
  if (!read) {
    const texts = {
      one: MATERIAL_OF(core.store.dialect, 'one'),
      many: MATERIAL_OF(core.store.dialect, 'many'),
    }
    read = coalesced(async (instanceIds: readonly string[]) => {
      const size = listSize(instanceIds)
      const rows = await core.store.query<MaterialRow>(texts[size], [listParam(instanceIds, size)])
      const byId = new Map<string, MaterialRow[]>()
      for (const row of rows) {
        const of = byId.get(row.instanceId)
        if (of) of.push(row)
        else byId.set(row.instanceId, [row])
      }
      return instanceIds.map((id) => byId.get(id) ?? [])
    })
    materialReads.set(core, read)
  }
  return read
}

// Read by the first signature of a key whose private half did not come with the load.
const sealedPrivateOf = preparedRead((db) =>
  db
    .select({ privateJwkSealed: instanceKeys.privateJwkSealed })
    .from(instanceKeys)
    .where(
      and(
        eq(instanceKeys.instanceId, sql.placeholder('instanceId')),
        eq(instanceKeys.kid, sql.placeholder('kid')),
      ),
    )
    .prepare('instance_key_private_of'),
)

/** Calls `open` once, on first use, and keeps what it gave. */
function onFirstUse<T>(open: () => T): () => T {
  let opened: { value: T } | null = null
  return () => {
    opened ??= { value: open() }
    return opened.value
  }
}

/** An instance as one read finds it: the state it serves under (kept beside its keys: schema.ts) and its keys. */
export interface LoadedInstance {
  state: WorkspaceState
  /** Null while it has none. */
  keys: InstanceKeyMaterial | null
  /** Its oldest clients as the read found them; null without its row, or (PostgreSQL) with no app. */
  clients: LoadedClients | null
}

/**
 * An instance's clients as its load read them: the aggregate's JSON text (decoded when a client is
 * first asked for, clients.ts: an instance loaded for its JWKS alone never parses it) and when the
 * read began (what their memo's age counts from, as for a read by id).
 */
export interface LoadedClients {
  text: string
  readAt: number
}

/**
 * An instance's state, signing keys, cookie keys and oldest clients, in one read. Nothing sealed
 * is opened here: a private key is opened by its first signature (the ES256 one from what the load
 * read, an RS256 one read then), the cookie keys by the first signed cookie. An instance that only
 * answers discovery and client-credentials tokens never reads its RS256 private key or opens its
 * cookie keys, and a cold instance's load decrypts nothing.
 */
export async function loadInstance(core: Core, instanceId: string): Promise<LoadedInstance> {
  const readAt = core.clock.now()
  const rows = await materialOf(core)(instanceId)
  const first = rows[0]
  if (!first) return { state: servingState(false, null), keys: null, clients: null }
  const clients = rows.find((row) => row.clients !== null)?.clients ?? null
  return {
    state: servingState(first.serving, first.dataPlaneRps),
    keys: keyMaterial(core, instanceId, rows),
    clients: clients === null ? null : { text: clients, readAt },
  }
}

/** An instance's signing keys and cookie keys, or null while it has none (`loadInstance`). */
export async function loadInstanceKeys(core: Core, instanceId: string): Promise<InstanceKeyMaterial | null> {
  return (await loadInstance(core, instanceId)).keys
}

function keyMaterial(core: Core, instanceId: string, rows: MaterialRow[]): InstanceKeyMaterial | null {
  const first = rows[0]
  if (!first) return null
  const keys = rows.flatMap(({ kid, alg, publicJwk, createdAt, privateJwkSealed }) =>
    kid !== null && alg !== null && publicJwk !== null && createdAt !== null
      ? [{ kid, alg, publicJwk, createdAt: Number(createdAt), privateJwkSealed }]
      : [],
  )
  if (keys.length === 0) return null
  // The same order on every node: by alg, then age, then kid.
  keys.sort(
    (a, b) =>
      ALGS.indexOf(a.alg as never) - ALGS.indexOf(b.alg as never) ||
      a.createdAt - b.createdAt ||
      (a.kid < b.kid ? -1 : a.kid > b.kid ? 1 : 0),
  )
  const { cookieKeysSealed } = first
  return {
    keys: keys.map(({ kid, publicJwk, privateJwkSealed }) => ({
      publicJwk: JSON.parse(publicJwk) as Record<string, unknown>,
      openPrivate:
        privateJwkSealed === null
          ? () => readPrivateKey(core, instanceId, kid)
          : async () => openSealedKey(core, kid, privateJwkSealed),
    })),
    cookieKeys: onFirstUse(() =>
      JSON.parse(core.secrets.open(cookieKeysSealed, `cookie-keys:${instanceId}`)),
    ),
  }
}

const openSealedKey = (core: Core, kid: string, sealed: string): Record<string, unknown> =>
  JSON.parse(core.secrets.open(sealed, `instance-key:${kid}`))

async function readPrivateKey(core: Core, instanceId: string, kid: string): Promise<Record<string, unknown>> {
  const [row] = await sealedPrivateOf(core.db).execute({ instanceId, kid })
  if (!row) throw new Error(`instance ${instanceId} has no signing key ${kid}`)
  return openSealedKey(core, kid, row.privateJwkSealed)
}

/** Public keys only, for local verification of tokens the instance issued. */
async function publicJwks(core: Core, instanceId: string): Promise<{ keys: JsonWebKey[] }> {
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
