import { AsyncLocalStorage } from 'node:async_hooks'
import type { Core } from '../../core'
import { type ClientReads, createClientFinder } from '../clients'
import type { InstanceKeyMaterial, LoadedClients } from '../engine/keys'
import { issuerFor } from '../instances'
import type { LoginPolicy } from '../login-policy'
import { type PayloadCodec, payloadCodec } from '../payload-keys'
import { type KeyStore, keyStoreOf } from './internals'
import { InstanceSigningKey } from './signing-keys'

/**
 * Everything of one instance the shared Provider reads (internals.ts, configuration.ts): its issuer, keys and cookie
 * keys, the clients and payloads of its adapter, and the login policy its prompts and session
 * lifetime follow. A few KiB, so a node holds every active instance (docs/performance.md).
 */
export interface ServedInstance {
  id: string
  issuer: string
  /** Path prefix of the issuer: the interaction URLs and the scope of long-lived cookies. */
  prefix: string
  /** The private signing keys, as oidc-provider keeps them. */
  keystore: KeyStore
  /** The public JWKS its jwks endpoint answers. */
  jwks: { keys: Record<string, unknown>[] }
  /** Its cookie keys, opened on first use (InstanceKeyMaterial). */
  cookieKeys: () => string[]
  policy: LoginPolicy
  codec: PayloadCodec
  findClient: ReturnType<typeof createClientFinder>
  /** oidc-provider's Client objects of this instance, by the digest of their metadata. */
  clientObjects: ClientObjects
}

/**
 * Every option the shared Provider (and the hosted pages it hands to) serves per instance: what
 * varies between two instances of one process, each with the fields of the instance record it is
 * read from. tests/instance-isolation.test.ts has an isolation case for each (two instances do not
 * see each other's value) and fails for an option without one; pool.ts fails to compile when a field
 * of the record is read by no option here. A new per-instance option is added here first.
 */
export const PER_INSTANCE = {
  issuer: {
    reads: ['issuer'],
    what: 'the discovery `issuer`, `iss` of every token and introspection (internals.ts: provider.issuer)',
  },
  endpoints: {
    reads: ['issuer', 'prefix'],
    what: 'the endpoint URLs discovery names, provider.urlFor (internals.ts: provider.pathFor)',
  },
  signingKeys: {
    reads: ['keystore'],
    what: 'the keys its tokens are signed with (internals.ts: #int.keystore)',
  },
  jwks: { reads: ['jwks'], what: 'the public keys its jwks endpoint publishes (internals.ts: #int.jwks)' },
  cookieKeys: {
    reads: ['cookieKeys'],
    what: 'the keys its cookies are signed with (internals.ts: provider.keys)',
  },
  cookiePath: {
    reads: ['prefix'],
    what: 'the path its session cookies are scoped to (internals.ts: #int.configuration.cookies.long.path)',
  },
  interactions: {
    reads: ['prefix', 'id'],
    what: 'its interaction URLs (configuration.ts: interactions.url) and the interactions it stores',
  },
  clients: {
    reads: ['findClient'],
    what: 'the clients it knows, by id (adapter.ts; internals.ts: #int.staticClients)',
  },
  clientObjects: {
    reads: ['clientObjects'],
    what: "oidc-provider's Client objects of its clients (internals.ts: #int.dynamicClients)",
  },
  clientSecrets: {
    reads: ['findClient'],
    what: "the secret digests its clients are checked against, a rotated one's in its grace (index.ts)",
  },
  payloads: {
    reads: ['id', 'codec'],
    what: 'codes, tokens, grants and sessions it issued: its rows, its lookup keys (adapter.ts)',
  },
  deviceFlow: {
    reads: ['id', 'codec'],
    what: 'its device codes and their polling pace (grants/device-polling.ts)',
  },
  accounts: {
    reads: ['id'],
    what: 'the accounts it signs in and answers claims of (claims.ts: findAccount)',
  },
  featureClaims: {
    reads: ['id'],
    what: "the features' claims, of its own rows (claims.ts; the tenants feature's `tenants` among them)",
  },
  audience: {
    reads: ['id', 'issuer'],
    what: 'the audience of its client-credentials tokens; the instance its resource servers are asked of (resources.ts)',
  },
  sessionEnded: {
    reads: ['id'],
    what: 'the workspace a hosted logout records session.ended for (pages/logout.tsx)',
  },
  sessionLifetime: {
    reads: ['policy'],
    what: 'session_lifetime_hours of its login policy (configuration.ts: ttl.Session)',
  },
  secondFactor: {
    reads: ['policy'],
    what: 'mfa of its login policy: the login prompt asks a second factor (second-factor.ts)',
  },
  signInMethods: {
    reads: ['policy'],
    what: 'what its hosted pages offer by its login policy: registration, passwords, IdPs (pages/)',
  },
  idps: { reads: ['idps'], what: 'the external IdPs its sign-in page offers (pages/broker.tsx)' },
  brand: { reads: ['brand'], what: 'its look on every hosted page (pages/)' },
  csp: {
    reads: ['csp'],
    what: "its pages' Content-Security-Policy: its brand's style hash (security-headers.ts)",
  },
} as const satisfies Record<string, { reads: readonly InstanceField[]; what: string }>

/** The fields of the pool's instance record (pool.ts `Instance`) an option may be read from. */
type InstanceField = keyof ServedInstance | 'idps' | 'brand' | 'csp'

export type PerInstanceOption = keyof typeof PER_INSTANCE
/** The fields some option reads: pool.ts checks every field of its record is one of them. */
export type PerInstanceField = (typeof PER_INSTANCE)[PerInstanceOption]['reads'][number]

/** Client objects an instance keeps at most: oidc-provider's own cache holds 100 per Provider. */
const CLIENT_OBJECTS = 100

/**
 * What oidc-provider's Client.find asks of its cache on its dynamic path; bounded, the oldest out
 * first. The Client it finds or makes there is of the metadata the adapter has just answered, and
 * so remembered (`found`): the next request finds it by id (ClientFinder.remembered) instead of
 * making it again.
 */
class ClientObjects {
  private readonly held = new Map<string, unknown>()
  constructor(private readonly found: (client: unknown) => void = () => {}) {}
  get(digest: string): unknown {
    const client = this.held.get(digest)
    if (client !== undefined) this.found(client)
    return client
  }
  set(digest: string, client: unknown): void {
    if (this.held.size >= CLIENT_OBJECTS) this.held.delete(this.held.keys().next().value as string)
    this.held.set(digest, client)
    this.found(client)
  }
  clear(): void {
    this.held.clear()
  }
  get size(): number {
    return this.held.size
  }
}

/** The algorithms every instance signs with, one key each (keys.ts): part of the Provider's shape. */
export const SIGNING_ALGS = ['ES256', 'RS256'] as const

/** What an instance serves with from its keys alone; its login policy is read by its first page (pool.ts). */
export type ServedKeys = Omit<ServedInstance, 'policy'>

export function servedInstance(
  core: Core,
  id: string,
  prefix: string,
  keys: InstanceKeyMaterial,
  clients: ClientReads,
  /** The clients its load read, while still current (the platform's are its own, from code: never asked). */
  loaded: () => LoadedClients | null = () => null,
): ServedKeys {
  const algs = new Set(keys.keys.map((key) => String(key.publicJwk.alg)))
  // oidc-provider narrows its signing algorithm lists by the keys it was built with, once: an
  // instance with other algorithms would advertise and use what it cannot sign.
  if ([...algs].sort().join() !== SIGNING_ALGS.join()) {
    throw new Error(`instance ${id}: signing keys ${[...algs].join()} instead of ${SIGNING_ALGS.join()}`)
  }
  const keystore = keyStoreOf(keys.keys.map((key) => new InstanceSigningKey(key)))
  const findClient = createClientFinder(core, id, clients, loaded)
  return {
    id,
    issuer: issuerFor(core.config, id),
    prefix,
    keystore,
    jwks: { keys: [...keystore].map(publicJwk) },
    cookieKeys: keys.cookieKeys,
    codec: payloadCodec(core, id),
    findClient,
    clientObjects: new ClientObjects((client) =>
      findClient.remembered.set((client as { clientId: string }).clientId, client),
    ),
  }
}

/** A key's public members, as oidc-provider's jwks endpoint lists them (initialize_keystore.js). */
const publicJwk = (k: Record<string, unknown>) => ({
  kty: k.kty,
  use: k.use,
  kid: k.kid,
  alg: k.alg,
  crv: k.crv,
  e: k.e,
  n: k.n,
  x: k.x,
  y: k.y,
})

const scope = new AsyncLocalStorage<ServedInstance>()

/** Runs `fn` (a request's dispatch) for one instance: the shared Provider reads it from here. */
export const serving = <T>(instance: ServedInstance, fn: () => T): T => scope.run(instance, fn)

/**
 * The instance of the request being served. Never a default: outside a request for an instance the
 * shared Provider fails (a 500), rather than answer with another instance's issuer or keys.
 */
export function current(): ServedInstance {
  const instance = scope.getStore()
  if (!instance) throw new Error('an identity instance was read outside a request for it')
  return instance
}

/** The id of the instance being served, for log lines only (which must not fail). */
export const currentId = (): string | undefined => scope.getStore()?.id
