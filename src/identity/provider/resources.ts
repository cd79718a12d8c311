import { type Configuration, errors } from 'oidc-provider'
import type { Core } from '../../core'
import { issuerFor, PLATFORM } from '../instances'
import { controlPlaneAudience } from '../platform'

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

export function resourceIndicators(core: Core, instanceId: string): ResourceIndicators {
  const issuer = issuerFor(core.config, instanceId)
  return {
    enabled: true,
    // Client credentials always yield a JWT: without a resource, the instance's own audience.
    defaultResource: async (ctx) =>
      ctx.oidc.params?.grant_type === 'client_credentials'
        ? instanceId === PLATFORM
          ? controlPlaneAudience(core)
          : issuer
        : undefined,
    useGrantedResource: async () => true,
    getResourceServerInfo: async (_ctx, resource) => {
      const info = resourceServer(core, instanceId, resource)
      if (!info) throw new errors.InvalidTarget()
      return info
    },
  }
}
