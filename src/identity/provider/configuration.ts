import type { Configuration } from 'oidc-provider'
import type { Core } from '../../core'
import { PREVIOUS_SECRET } from '../clients'
import { createAdapterClass } from '../engine/adapter'
import type { Extensions } from '../engine/extension'
import { addSteps } from '../engine/steps'
import { setError } from '../errors'
import { devicePages } from '../pages/device'
import { logoutPages } from '../pages/logout'
import { accountFinder, claimsOf, extraTokenClaims } from './claims'
import { loadExistingGrant } from './consent'
import { current } from './instance-scope'
import { resourceIndicators, scopesOf } from './resources'
import { promptsFor } from './second-factor'
import { TTL } from './ttl'

/** What the shared Provider is constructed with; every instance's own is read per request. */
interface ProviderSetup {
  /** Keys of the construction only (their algorithms shape the configuration); never signed with. */
  jwks: { keys: Record<string, unknown>[] }
  cookieKeys: string[]
  /** The features' claims (and their scopes), interaction steps and resource servers. */
  extensions: Pick<Extensions, 'claims' | 'steps'> & Partial<Pick<Extensions, 'resourceServers'>>
}

/**
 * `session_lifetime_hours` of the instance's policy, counted from the sign-in, not from the last
 * use: oidc-provider saves a session again on each authorization with this TTL, so a fixed number
 * would be an idle timeout that an app re-authenticating silently keeps alive for ever.
 */
const sessionTtl = (_ctx: unknown, session: { loginTs?: number }): number => {
  const lifetime = current().policy.sessionLifetimeHours * 3600
  if (!session.loginTs) return lifetime
  return Math.max(1, session.loginTs + lifetime - Math.floor(Date.now() / 1000))
}

/** The oidc-provider configuration every instance is served with (provider/index.ts). */
export function providerConfiguration(core: Core, setup: ProviderSetup): Configuration {
  // Every issuer comes from the one template: all or none are https.
  const secure = core.config.authUrlTemplate.startsWith('https:')
  const { claims, steps } = setup.extensions
  const scopes = scopesOf(claims)
  return {
    adapter: createAdapterClass(core) as never,
    jwks: setup.jwks as never,
    cookies: {
      keys: setup.cookieKeys,
      // Path-based instances share a host: the long-lived cookies are scoped to the instance (the
      // path is the served instance's, see provider/internals.ts).
      long: { path: '/', secure, httpOnly: true, sameSite: 'lax' },
      short: { secure, httpOnly: true, sameSite: 'lax' },
    },
    claims: claimsOf(claims),
    // ID tokens carry the claims of the granted scopes (what RPs and our own callback expect).
    conformIdTokenClaims: false,
    scopes,
    responseTypes: ['code'],
    // A rotated secret's previous digest and its grace travel with the client's metadata (clients.ts).
    extraClientMetadata: { properties: [PREVIOUS_SECRET] },
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
    findAccount: accountFinder(core, claims),
    interactions: {
      url: (_ctx, interaction) => `${current().prefix}/interaction/${interaction.uid}`,
      policy: addSteps(promptsFor(core), steps),
    },
    extraTokenClaims: extraTokenClaims(core),
    // SPEC login rule 1: which external IdP to go to straight away (the sign-in page reads it).
    extraParams: ['idp_hint'],
    loadExistingGrant,
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      userinfo: { enabled: true },
      resourceIndicators: resourceIndicators(core, scopes, setup.extensions.resourceServers),
      deviceFlow: { enabled: true, ...devicePages },
      rpInitiatedLogout: { enabled: true, ...logoutPages },
      // Each instance's keys sign through node:crypto (signing-keys.ts). Acknowledged: an upgrade
      // that changes this experiment's contract stops the Provider's construction, not a signature.
      externalSigningSupport: { enabled: true, ack: 'experimental-01' },
    },
    ttl: { ...TTL, Session: sessionTtl },
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
