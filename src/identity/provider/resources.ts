import { type Configuration, errors } from 'oidc-provider'
import type { Core } from '../../core'
import {
  type ClaimSource,
  RESOURCE_TOKEN_TTL,
  type ResourceServer,
  type ResourceServerSource,
} from '../engine/extension'
import { ENGINE_SCOPES } from '../engine/reserved'
import { PLATFORM } from '../instances'
import { controlPlaneAudience } from '../platform-clients'
import { current, type ServedInstance } from './instance-scope'
import { ACCESS_TOKEN_TTL } from './ttl'

/** The scopes of every instance: the engine's, then those of the features' claims. */
export const scopesOf = (sources: readonly ClaimSource[]) => [
  ...ENGINE_SCOPES,
  ...sources.map((s) => s.scope),
]

/** Every access token for an API is a JWT (RFC 9068), ES256-signed, for the resource itself. */
const jwtFor = (resource: string, scope: string, accessTokenTTL: number) => ({
  scope,
  audience: resource,
  accessTokenTTL,
  accessTokenFormat: 'jwt' as const,
  jwt: { sign: { alg: 'ES256' as const } },
})

/**
 * RFC 8707 resource servers. The platform instance serves one API, the control plane; a
 * workspace's, what the features' source answers (resourceServers), else any its apps name. Its
 * own issuer is the engine's: features' sources are not asked of it.
 */
function resourceServer(
  core: Core,
  instance: ServedInstance,
  resource: string,
  scope: string,
  source: ResourceServerSource | null | undefined,
) {
  if (instance.id === PLATFORM)
    return resource === controlPlaneAudience(core) ? jwtFor(resource, scope, ACCESS_TOKEN_TTL) : null
  const answer =
    source && resource !== instance.issuer
      ? source({ id: instance.id, issuer: instance.issuer }, resource)
      : undefined
  if (answer === undefined) return jwtFor(resource, scope, ACCESS_TOKEN_TTL)
  if (answer === null) return null
  const checked = checkedAnswer(answer, resource)
  return jwtFor(resource, checked.scopes.join(' '), checked.accessTokenTTL)
}

/** A scope token (RFC 6749 §3.3): printable ASCII but space, `"` and `\`. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/

/**
 * What a feature's source answered, refused loudly when it is not a ResourceServer: a token of
 * the wrong TTL or scopes would be issued otherwise, or a promise taken for a resource server.
 */
function checkedAnswer(answer: unknown, resource: string): ResourceServer {
  const fail = (why: string): never => {
    throw new Error(`the resource servers source answered ${resource} with ${why}`)
  }
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer))
    return fail('something other than a resource server, null or undefined')
  if (typeof (answer as { then?: unknown }).then === 'function')
    return fail('a promise: it must answer synchronously')
  const { scopes, accessTokenTTL, ...rest } = answer as Record<string, unknown>
  const extra = Object.keys(rest)
  if (extra.length) fail(`what a resource server has not: ${extra.join(', ')}`)
  if (!Array.isArray(scopes) || !scopes.every((s) => typeof s === 'string' && SCOPE_TOKEN.test(s)))
    fail('scopes that are not a list of scope tokens')
  const { min, max } = RESOURCE_TOKEN_TTL
  const ttl = accessTokenTTL as number
  if (!Number.isInteger(ttl) || ttl < min || ttl > max)
    fail(`an accessTokenTTL that is not a whole number of seconds from ${min} to ${max}`)
  return answer as ResourceServer
}

type ResourceIndicators = NonNullable<NonNullable<Configuration['features']>['resourceIndicators']>

export function resourceIndicators(
  core: Core,
  scopes: readonly string[],
  source?: ResourceServerSource | null,
): ResourceIndicators {
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
      const info = resourceServer(core, current(), resource, scopeText, source)
      if (!info) throw new errors.InvalidTarget()
      return info
    },
  }
}
