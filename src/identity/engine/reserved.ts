import type { IdentityExtension } from './extension'

// What is the engine's own: read by the composition of the features' extensions, which job workers
// run too, so nothing here loads oidc-provider or the pages.

/** The engine's own scopes and the claims each releases (provider/claims.ts). */
export const ENGINE_CLAIMS: Readonly<Record<string, readonly string[]>> = {
  openid: ['sub', 'amr'],
  email: ['email', 'email_verified'],
  profile: ['name'],
}

/** Every instance's scopes of its own (provider/resources.ts): `offline_access` releases no claim. */
export const ENGINE_SCOPES = ['openid', 'offline_access', 'email', 'profile'] as const

/**
 * Grant types oidc-provider handles itself (lib/helpers/configuration.js) and the platform's
 * jwt-bearer (RFC 7523, machine keys): `registerGrantType` takes a second handler of a name
 * silently, so a feature's would replace the provider's for every client.
 */
const GRANT_TYPES = new Set([
  'authorization_code',
  'implicit',
  'refresh_token',
  'client_credentials',
  'urn:ietf:params:oauth:grant-type:device_code',
  'urn:openid:params:grant-type:ciba',
  'urn:ietf:params:oauth:grant-type:pre-authorized_code',
  'urn:ietf:params:oauth:grant-type:jwt-bearer',
])

/**
 * A feature's scope of one of the engine's names replaced its claims in the provider's
 * configuration (`amr` left the ID token with a feature's `openid`).
 */
const SCOPES = new Set<string>(ENGINE_SCOPES)

/**
 * The engine's claims and those a token carries of its own (RFC 7519 §4.1, OpenID Connect Core
 * §2, front- and back-channel logout's `sid`, RFC 7800's `cnf`): oidc-provider merges a released
 * claim of one of these names into the ID token where it sets none itself (`nonce` without the
 * app's, `sid`, `azp`), and userinfo carries them all as the feature answered them.
 */
const CLAIMS = new Set([
  ...Object.values(ENGINE_CLAIMS).flat(),
  ...['iss', 'sub', 'aud', 'exp', 'nbf', 'iat', 'jti'],
  ...['auth_time', 'nonce', 'acr', 'amr', 'azp', 'at_hash', 'c_hash', 's_hash', 'sid', 'cnf'],
])

/**
 * oidc-provider's prompts (`interactionPolicy.base()`: a step of one name stops every sign-in,
 * `login`, or is answered by the engine and never shown, `consent`) and what the engine keeps in
 * an interaction's result, where a step's answer is kept under its name.
 */
const STEPS = new Set(['login', 'consent', 'mfa', 'verify', 'broker', 'link', 'reset', 'error'])

/**
 * The first segments of the paths the engine answers below an issuer: the provider's routes
 * (oidc-provider's default `routes`, discovery) and the hosted pages' (pages/routes.ts, and the
 * favicon, logo and htmx they link: FAVICON_PATH, LOGO_PATH, HTMX_PATH). An endpoint is dispatched
 * before both, so one under these would answer in their place.
 */
const PATH_ROOTS = new Set([
  ...['auth', 'token', 'me', 'jwks', '.well-known', 'session', 'device', 'request', 'reg'],
  ...['backchannel', 'challenge', 'credential'],
  ...['interaction', 'broker', 'verify-email', 'forgot-password', 'reset-password', 'accept-invite', 'mfa'],
  ...['public', 'branding', 'assets'],
])

/**
 * Whether a route's path may match one of the engine's: its first segment is theirs, or matches
 * any (`/:id`, `/*`), or it is the issuer itself.
 */
function shadowsEngine(path: string): boolean {
  const first = path.split('/')[1] ?? ''
  return first === '' || first === '*' || first.startsWith(':') || PATH_ROOTS.has(first)
}

/**
 * Stops the start when a feature's extension names what is the engine's own: its item would stand
 * in for the engine's (a grant's handler, a scope's claims, a claim's value, a prompt, a path).
 */
export function refuseEngineOwn(feature: string, extension: IdentityExtension): void {
  const own = (what: string, name: string) => {
    throw new Error(`the ${feature} feature's ${what} "${name}" is the identity engine's own`)
  }
  for (const grant of extension.grants ?? []) if (GRANT_TYPES.has(grant.type)) own('grant type', grant.type)
  for (const source of extension.claims ?? []) {
    if (SCOPES.has(source.scope)) own('claim scope', source.scope)
    for (const claim of source.claims) if (CLAIMS.has(claim)) own('claim', claim)
  }
  for (const step of extension.steps ?? []) if (STEPS.has(step.name)) own('interaction step', step.name)
  for (const plugin of extension.endpoints ?? [])
    for (const route of plugin.routes)
      if (shadowsEngine(route.path)) own('endpoint', `${route.method} ${route.path}`)
}
