import { type Configuration, errors } from 'oidc-provider'
import type { Core } from '../../core'
import { PLATFORM } from '../instances'
import { controlPlaneAudience } from '../platform'
import { current } from './served'

export const SCOPES = ['openid', 'offline_access', 'email', 'profile', 'tenants']

/**
 * RFC 8707 resource servers: every access token for an API is a JWT (RFC 9068), ES256-signed. The
 * platform instance serves one API, the control plane; a workspace's instance any its apps name.
 */
function resourceServer(core: Core, instanceId: string, resource: string) {
  if (instanceId === PLATFORM && resource !== controlPlaneAudience(core)) return null
  return {
    scope: SCOPES.join(' '),
    audience: resource,
    accessTokenTTL: 3600,
    accessTokenFormat: 'jwt' as const,
    jwt: { sign: { alg: 'ES256' as const } },
  }
}

type ResourceIndicators = NonNullable<NonNullable<Configuration['features']>['resourceIndicators']>

export function resourceIndicators(core: Core): ResourceIndicators {
  return {
    enabled: true,
    // Client credentials always yield a JWT: without a resource, the instance's own audience.
    defaultResource: async (ctx) => {
      if (ctx.oidc.params?.grant_type !== 'client_credentials') return undefined
      const { id, issuer } = current()
      return id === PLATFORM ? controlPlaneAudience(core) : issuer
    },
    useGrantedResource: async () => true,
    getResourceServerInfo: async (_ctx, resource) => {
      const info = resourceServer(core, current().id, resource)
      if (!info) throw new errors.InvalidTarget()
      return info
    },
  }
}
