import { LRUCache } from 'lru-cache'
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
  const known = new LRUCache<string, { metadata: Metadata; until: number }>({ max: 1000 })
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
      known.set(clientId, { metadata, until: now + MEMO_MS })
      return metadata
    })
  }
}
