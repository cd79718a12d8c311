import type { Configuration } from 'oidc-provider'
import type { Core } from '../../core'
import { createAdapterClass } from '../adapter'
import type { ClientSource, IdentityDeps } from '../deps'
import { setError } from '../errors'
import { issuerFor } from '../instances'
import type { InstanceKeyMaterial } from '../keys'
import { devicePages } from '../pages/device'
import { logoutPages } from '../pages/logout'
import type { LoginPolicy } from '../policy'
import { accountFinder, CLAIMS, extraTokenClaims } from './claims'
import { loadExistingGrant } from './consent'
import { resourceIndicators, SCOPES } from './resources'
import { promptsFor } from './second-factor'
import { TTL } from './ttl'

export interface InstanceSetup {
  keys: InstanceKeyMaterial
  /** Path prefix of the issuer, for the interaction URLs and the scope of long-lived cookies. */
  prefix: string
  clients: ClientSource
  /** The tenants of an account, for the `tenants` claim (IdentityDeps.tenantsOf). */
  tenantsOf?: IdentityDeps['tenantsOf']
  /** The instance's login policy (its session lifetime, and what the hosted pages apply). */
  policy: LoginPolicy
}

/**
 * `session_lifetime_hours` counted from the sign-in, not from the last use: oidc-provider saves a
 * session again on each authorization with this TTL, so a fixed number would be an idle timeout
 * that an app re-authenticating silently keeps alive for ever.
 */
const sessionTtl =
  (hours: number) =>
  (_ctx: unknown, session: { loginTs?: number }): number => {
    const lifetime = hours * 3600
    if (!session.loginTs) return lifetime
    return Math.max(1, session.loginTs + lifetime - Math.floor(Date.now() / 1000))
  }

/** The oidc-provider configuration of one instance. */
export function providerConfiguration(core: Core, instanceId: string, setup: InstanceSetup): Configuration {
  const secure = issuerFor(core.config, instanceId).startsWith('https:')
  return {
    adapter: createAdapterClass(core, instanceId, setup.clients) as never,
    jwks: setup.keys.jwks as never,
    cookies: {
      keys: setup.keys.cookieKeys,
      // Path-based instances share a host: scope the long-lived cookies to the instance.
      long: { path: setup.prefix || '/', secure, httpOnly: true, sameSite: 'lax' },
      short: { secure, httpOnly: true, sameSite: 'lax' },
    },
    claims: CLAIMS,
    // ID tokens carry the claims of the granted scopes (what RPs and our own callback expect).
    conformIdTokenClaims: false,
    scopes: SCOPES,
    responseTypes: ['code'],
    clientDefaults: {
      id_token_signed_response_alg: 'RS256',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
    enabledJWA: {
      // Asymmetric only: client secrets are stored hashed, so they can never be HMAC keys.
      idTokenSigningAlgValues: ['RS256', 'ES256'],
      userinfoSigningAlgValues: ['RS256', 'ES256'],
      clientAuthSigningAlgValues: ['RS256', 'ES256', 'PS256', 'EdDSA'],
    },
    pkce: { required: (_ctx, client) => client.tokenEndpointAuthMethod === 'none' },
    findAccount: accountFinder(core, instanceId, setup),
    interactions: {
      url: (_ctx, interaction) => `${setup.prefix}/interaction/${interaction.uid}`,
      policy: promptsFor(core, instanceId, setup.policy),
    },
    extraTokenClaims: extraTokenClaims(core, instanceId),
    // SPEC login rule 1: which external IdP to go to straight away (the sign-in page reads it).
    extraParams: ['idp_hint'],
    loadExistingGrant,
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      userinfo: { enabled: true },
      resourceIndicators: resourceIndicators(core, instanceId),
      deviceFlow: { enabled: true, ...devicePages },
      rpInitiatedLogout: { enabled: true, ...logoutPages },
    },
    ttl: { ...TTL, Session: sessionTtl(setup.policy.sessionLifetimeHours) },
    rotateRefreshToken: true,
    // oidc-provider calls this for a browser only (its JSON errors it writes itself).
    renderError: async (ctx, out) => {
      setError(
        ctx,
        {
          status: ctx.status,
          title: 'Something went wrong',
          message: String(out.error_description ?? 'The request could not be completed.'),
        },
        'text/html',
      )
    },
  }
}
