import { type Configuration, errors } from 'oidc-provider'
import type { Core } from '../../core'
import type { ClaimSource } from '../engine/extension'
import { ENGINE_SCOPES } from '../engine/reserved'
import { PLATFORM } from '../instances'
import { controlPlaneAudience } from '../platform-clients'
import { current } from './instance-scope'

/** The scopes of every instance: the engine's, then those of the features' claims. */
export const scopesOf = (sources: readonly ClaimSource[]) => [
  ...ENGINE_SCOPES,
  ...sources.map((s) => s.scope),
]

/**
 * RFC 8707 resource servers: every access token for an API is a JWT (RFC 9068), ES256-signed. The
 * platform instance serves one API, the control plane; a workspace's instance any its apps name.
 */
function resourceServer(core: Core, instanceId: string, resource: string, scope: string) {
  if (instanceId === PLATFORM && resource !== controlPlaneAudience(core)) return null
  return {
    scope,
    audience: resource,
    accessTokenTTL: 3600,
    accessTokenFormat: 'jwt' as const,
    jwt: { sign: { alg: 'ES256' as const } },
  }
}

type ResourceIndicators = NonNullable<NonNullable<Configuration['features']>['resourceIndicators']>

export function resourceIndicators(core: Core, scopes: readonly string[]): ResourceIndicators {
  const scopeText = scopes.join(' ')
  return {
    enabled: true,
    // Not async, these three: oidc-provider awaits them on every token, and a function that need not
    // wait costs a promise and a turn of the microtask queue less.
    // Client credentials always yield a JWT: without a resource, the instance's own audience.
    defaultResource: (ctx) => {
      if (ctx.oidc.params?.grant_type !== 'client_credentials') return undefined
      const { id, issuer } = current()
      return id === PLATFORM ? controlPlaneAudience(core) : issuer
    },
    useGrantedResource: () => true,
    getResourceServerInfo: (_ctx, resource) => {
      const info = resourceServer(core, current().id, resource, scopeText)
      if (!info) throw new errors.InvalidTarget()
      return info
    },
  }
}
