import type { Core } from '../core'
import { loadedClientRecords } from './client-records'
import type { ClientKey, ClientRecord, ClientSource } from './deps'
import type { BuiltInClient } from './engine/extension'
import type { LoadedClients } from './engine/keys'
import { coalesced, gathered } from './engine/read-batching'
import { MEMO_MS, PLATFORM, REFRESH_AHEAD_MS } from './instances'
import { platformClients } from './platform-clients'

type Metadata = Readonly<Record<string, unknown>>

/**
 * The client metadata (an extra property of oidc-provider's, `extraClientMetadata`) that carries a
 * rotated secret's previous digest and until when it is accepted (epoch ms); the secret check
 * (provider/index.ts, through internals.ts' patchClientSecretCompare) reads it. Absent without a grace.
 */
export const PREVIOUS_SECRET = 'previous_client_secret'

/** What PREVIOUS_SECRET holds. */
export interface PreviousSecret {
  hash: string
  until: number
}
type Found = Metadata | undefined | Promise<Metadata | undefined>

/**
 * Client metadata (RFC 7591 names) of a client: its type drives grants and authentication. A
 * confidential client of a workspace may also use `machineGrants` (client_credentials, and the
 * features' grant types); the platform's own clients get none: platform tokens always stand for a user.
 */
function clientMetadata(client: ClientRecord, machineGrants: readonly string[]): Metadata {
  const confidential = client.type === 'web'
  return Object.freeze({
    client_id: client.clientId,
    client_name: client.name,
    ...(confidential ? { client_secret: client.clientSecretHash } : {}),
    ...(confidential && client.previousSecret
      ? { [PREVIOUS_SECRET]: client.previousSecret satisfies PreviousSecret }
      : {}),
    token_endpoint_auth_method: confidential ? 'client_secret_basic' : 'none',
    application_type: client.type === 'native' ? 'native' : 'web',
    redirect_uris: client.redirectUris,
    post_logout_redirect_uris: client.postLogoutRedirectUris,
    response_types: ['code'],
    grant_types: [
      'authorization_code',
      'refresh_token',
      ...(confidential ? machineGrants : []),
      ...client.extraGrants,
    ],
  })
}

/**
 * How an instance's client finder reads a client: `now` for a request that waits for it (alone, or
 * with the others asked while one is under way: `coalesced`), `ahead` for a client in use read again
 * before its memo ends (nothing waits; gathered with the other instances' reads ahead).
 */
export interface ClientReads {
  now(instanceId: string, clientId: string): Promise<ClientRecord | null>
  ahead(instanceId: string, clientId: string): Promise<ClientRecord | null>
  /** What a workspace's confidential clients may ask for beyond the type's grants. */
  machineGrants: readonly string[]
  /** The features' clients defined in code, which every workspace instance serves besides its apps. */
  builtIns: readonly BuiltInClient[]
}

/** The reads of a node's client finders from one source: those waited on coalesced, the reads ahead gathered. */
export function clientReads(
  source: ClientSource,
  extensionGrants: readonly string[] = [],
  builtIns: readonly BuiltInClient[] = [],
): ClientReads {
  const read = (keys: readonly ClientKey[]) => source.find(keys)
  const now = coalesced(read)
  const ahead = gathered(read)
  return {
    now: (instanceId, clientId) => now({ instanceId, clientId }),
    ahead: (instanceId, clientId) => ahead({ instanceId, clientId }),
    machineGrants: ['client_credentials', ...extensionGrants],
    builtIns,
  }
}

/**
 * What a client id can be (RFC 6749 §A.1: VSCHARs, %x20-7E; ours are 22): anything else names no
 * client, and is answered so without a read. PostgreSQL refuses a NUL in text with an error, which
 * was a 500 for any request that sent `client_id=%00`.
 */
const CLIENT_ID = /^[\x20-\x7e]{1,255}$/

/** Clients one instance remembers at most. */
const KNOWN_CLIENTS = 1000

/** A client an instance remembers: its metadata until `until`, and oidc-provider's Client of it. */
interface Known {
  metadata: Metadata
  until: number
  /** oidc-provider's Client object made of this metadata, once it made one (`remembered`). */
  client?: unknown
}

export interface ClientFinder {
  /** The adapter's `find` of a client: its metadata, without a promise when remembered. */
  (clientId: string): Found
  /**
   * oidc-provider's static-client slot (`#int.staticClients`), answered from the clients this
   * instance remembers: a remembered client's Client object is found by its id. The dynamic path
   * awaits the adapter, then serialises and hashes the metadata to find the Client, on every token
   * request. A client not remembered is left to that path. `get` answers the metadata until
   * oidc-provider made its Client (`new Client(metadata)`, then `set`, with no await between them
   * for clients without a sector identifier, which ours never have).
   */
  readonly remembered: { get(clientId: string): unknown; set(clientId: string, client: unknown): void }
}

/** The static-client slot over remembered clients (see ClientFinder). */
function rememberedSlot(current: (clientId: string) => Known | undefined): ClientFinder['remembered'] {
  return {
    get: (clientId) => {
      const known = current(clientId)
      return known && (known.client ?? known.metadata)
    },
    set: (clientId, client) => {
      const known = current(clientId)
      if (known) known.client = client
    },
  }
}

/**
 * How one instance finds its clients: the platform's from code, a workspace's from the apps
 * feature (`source`, read live: a new app works at once), but for the dashboard's try client of
 * the instance (from code). Clients found lately are remembered (a lookup per token request costs
 * more than the rest of client authentication) until the Provider is dropped on a change
 * (`core.instances`), else for MEMO_MS. A workspace's oldest clients come
 * with its load (`loaded`, keys.ts) and are remembered from that read, so a cold instance's first
 * token reads no client of its own; any other is read by id.
 */
export function createClientFinder(
  core: Core,
  instanceId: string,
  reads: ClientReads,
  loaded: () => LoadedClients | null = () => null,
): ClientFinder {
  if (instanceId === PLATFORM) {
    const own = new Map<string, Known>(
      [...platformClients(core)].map(([id, c]) => [id, { metadata: clientMetadata(c, []), until: Infinity }]),
    )
    return Object.assign((clientId: string): Found => own.get(clientId)?.metadata, {
      remembered: rememberedSlot((clientId) => own.get(clientId)),
    })
  }
  // The features' clients of this instance defined in code (the dashboard's try client): never read,
  // and answered by this instance alone (another instance's finder reads their ids from the apps,
  // and finds nothing). Each made when first asked for: most instances are never tried.
  const builtInIds = reads.builtIns.map((b) => b.clientId(instanceId))
  const builtInKnown: Known[] = []
  const builtIn = (clientId: string): Known | undefined => {
    const at = builtInIds.indexOf(clientId)
    if (at < 0) return undefined
    builtInKnown[at] ??= {
      metadata: clientMetadata(reads.builtIns[at]!.record(instanceId), []),
      until: Infinity,
    }
    return builtInKnown[at]
  }
  // A Map that grows with the clients actually used, not an LRUCache: lru-cache allocates its
  // whole capacity up front (24.5 KiB for 1,000 slots), in every Provider of the pool, where most
  // instances use one or two clients. Entries live MEMO_MS, so the bound is reached only by a
  // burst of distinct clients; the expired ones go first, then the oldest.
  const known = new Map<string, Known>()
  const remember = (clientId: string, entry: Known, now: number) => {
    known.delete(clientId)
    if (known.size >= KNOWN_CLIENTS) {
      for (const [id, e] of known) if (e.until <= now) known.delete(id)
      for (const id of known.keys()) {
        if (known.size < KNOWN_CLIENTS) break
        known.delete(id)
      }
    }
    known.set(clientId, entry)
  }
  // A client in use near the end of its memo is read again in the background (REFRESH_AHEAD_MS),
  // gathered with other reads ahead: unchanged, its entry (and the Client made of it) lives on;
  // changed, the new metadata replaces it.
  const refreshing = new Set<string>()
  const refresh = (clientId: string, hit: Known) => {
    refreshing.add(clientId)
    const now = core.clock.now()
    reads
      .ahead(instanceId, clientId)
      .then(
        (client) => {
          if (known.get(clientId) !== hit) return
          if (!client) known.delete(clientId)
          else {
            const metadata = clientMetadata(client, reads.machineGrants)
            if (JSON.stringify(metadata) === JSON.stringify(hit.metadata)) hit.until = now + MEMO_MS
            else remember(clientId, { metadata, until: now + MEMO_MS }, now)
          }
        },
        // A failed read is the next request's to meet, once the memo ended (it awaits its own read).
        () => {},
      )
      .finally(() => refreshing.delete(clientId))
  }
  // The clients the load read, taken in when a client is first asked for (an instance loaded for
  // its JWKS alone never decodes them), each remembered from when that read began; none if the
  // pool heard of a change since the read (`loaded` answers null). Taken once: a record that does
  // not decode is left to the read by id.
  let pending: (() => LoadedClients | null) | null = loaded
  const takeLoaded = (take: () => LoadedClients | null) => {
    pending = null
    const took = take()
    if (!took) return
    const { text, readAt } = took
    for (const client of loadedClientRecords(text))
      if (!known.has(client.clientId))
        remember(
          client.clientId,
          { metadata: clientMetadata(client, reads.machineGrants), until: readAt + MEMO_MS },
          readAt,
        )
  }
  const fresh = (clientId: string): Known | undefined => {
    if (pending) takeLoaded(pending)
    const hit = known.get(clientId)
    if (!hit) return undefined
    const left = hit.until - core.clock.now()
    if (left <= 0) return undefined
    if (left <= REFRESH_AHEAD_MS && !refreshing.has(clientId)) refresh(clientId, hit)
    return hit
  }
  // A remembered client is answered without a promise of its own: this runs on every token request.
  const find = (clientId: string): Found => {
    const own = builtIn(clientId)
    if (own) return own.metadata
    if (!CLIENT_ID.test(clientId)) return undefined
    const hit = fresh(clientId)
    if (hit) return hit.metadata
    const now = core.clock.now()
    return reads.now(instanceId, clientId).then((client) => {
      if (!client) {
        known.delete(clientId)
        return undefined
      }
      const metadata = clientMetadata(client, reads.machineGrants)
      remember(clientId, { metadata, until: now + MEMO_MS }, now)
      return metadata
    })
  }
  return Object.assign(find, {
    remembered: rememberedSlot((clientId) => builtIn(clientId) ?? fresh(clientId)),
  })
}
