import { AsyncLocalStorage } from 'node:async_hooks'
import type { Core } from '../../core'
import { type ClientReads, createClientFinder } from '../clients'
import { issuerFor } from '../instances'
import type { InstanceKeyMaterial, LoadedClients } from '../keys'
import { type PayloadCodec, payloadCodec } from '../payload-keys'
import type { LoginPolicy } from '../policy'
import { type KeyStore, keyStoreOf } from './internals'
import { InstanceSigningKey } from './signing-keys'

/**
 * Everything of one instance the shared Provider reads (internals.ts, configuration.ts): its issuer, keys and cookie
 * keys, the clients and payloads of its adapter, and the login policy its prompts and session
 * lifetime follow. A few KiB, so a node holds every active instance (README "Performance").
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

/** Client objects an instance keeps at most: oidc-provider's own cache holds 100 per Provider. */
const CLIENT_OBJECTS = 100

/**
 * What oidc-provider's Client.find asks of its cache on its dynamic path; bounded, the oldest out
 * first. The Client it finds or makes there is of the metadata the adapter has just answered, and
 * so remembered (`found`): the next request finds it by id (ClientFinder.remembered) instead of
 * making it again.
 */
export class ClientObjects {
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
