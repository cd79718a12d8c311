import type { Core } from '../core'
import type { ClientRecord, ClientSource } from './deps'
import { MEMO_MS, PLATFORM } from './instances'
import { platformClients } from './platform'

type Metadata = Readonly<Record<string, unknown>>
type Found = Metadata | undefined | Promise<Metadata | undefined>

/**
 * Client metadata (RFC 7591 names) of a client: its type drives grants and authentication. The
 * platform's own clients get no client_credentials: platform tokens always stand for a user.
 */
export function clientMetadata(client: ClientRecord, machineGrants: boolean): Metadata {
  const confidential = client.type === 'web'
  return Object.freeze({
    client_id: client.clientId,
    client_name: client.name,
    ...(confidential ? { client_secret: client.clientSecretHash } : {}),
    token_endpoint_auth_method: confidential ? 'client_secret_basic' : 'none',
    application_type: client.type === 'native' ? 'native' : 'web',
    redirect_uris: client.redirectUris,
    post_logout_redirect_uris: client.postLogoutRedirectUris,
    response_types: ['code'],
    grant_types: [
      'authorization_code',
      'refresh_token',
      ...(confidential && machineGrants ? ['client_credentials'] : []),
      ...client.extraGrants,
    ],
  })
}

/** Clients one instance remembers at most. */
const KNOWN_CLIENTS = 1000

/**
 * How one instance finds its clients: the platform's from code, a workspace's from the apps
 * feature (`source`, read live: a new app works at once). Clients found lately are remembered (a
 * lookup per token request costs more than the rest of client authentication) until the Provider
 * is dropped on a change (`core.instances`), else for MEMO_MS.
 */
export function createClientFinder(core: Core, instanceId: string, source: ClientSource) {
  if (instanceId === PLATFORM) {
    const own = new Map([...platformClients(core)].map(([id, c]) => [id, clientMetadata(c, false)]))
    return (clientId: string): Found => own.get(clientId)
  }
  // A Map that grows with the clients actually used, not an LRUCache: lru-cache allocates its
  // whole capacity up front (24.5 KiB for 1,000 slots), in every Provider of the pool, where most
  // instances use one or two clients. Entries live MEMO_MS, so the bound is reached only by a
  // burst of distinct clients; the expired ones go first, then the oldest.
  const known = new Map<string, { metadata: Metadata; until: number }>()
  const remember = (clientId: string, entry: { metadata: Metadata; until: number }, now: number) => {
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
  // A remembered client is answered without a promise of its own: this runs on every token request.
  return (clientId: string): Found => {
    const now = core.clock.now()
    const hit = known.get(clientId)
    if (hit && hit.until > now) return hit.metadata
    return source.find(instanceId, clientId).then((client) => {
      if (!client) {
        known.delete(clientId)
        return undefined
      }
      const metadata = clientMetadata(client, true)
      remember(clientId, { metadata, until: now + MEMO_MS }, now)
      return metadata
    })
  }
}
