import './runtime-warning'
import Provider, { type Configuration, errors, type KoaContextWithOIDC } from 'oidc-provider'
import type { Core } from '../core'
import { safeEqual, sha256Hex } from '../shared/crypto'
import { findAccount } from './accounts'
import { createAdapterClass } from './adapter'
import { devicePolling } from './device-polling'
import { issuerFor, PLATFORM } from './instances'
import type { InstanceKeyMaterial } from './keys'
import { DeviceConfirmPage, DeviceInputPage, ErrorPage, LogoutPage, MessagePage } from './pages/views'
import { handleProviderErrors } from './provider-errors'

/** The claim of platform access tokens that names the account's `auth_epoch` at issue. */
export const AUTH_EPOCH_CLAIM = 'auth_epoch'

/** Audience of platform access tokens: the control plane's JSON API. */
export const controlPlaneAudience = (core: Core) => `${core.config.baseUrl}/v1`

const SCOPES = ['openid', 'offline_access', 'email', 'profile']

const html = (ctx: KoaContextWithOIDC, body: string | Promise<string>) =>
  Promise.resolve(body).then((b) => {
    ctx.type = 'html'
    ctx.body = b
  })

/** RFC 8707 resource servers: every access token for an API is a JWT (RFC 9068), ES256-signed. */
function resourceServer(core: Core, instanceId: string, resource: string) {
  const platform = instanceId === PLATFORM
  if (platform && resource !== controlPlaneAudience(core)) return null
  return {
    scope: SCOPES.join(' '),
    audience: resource,
    accessTokenTTL: 3600,
    accessTokenFormat: 'jwt' as const,
    jwt: { sign: { alg: 'ES256' as const } },
  }
}

/** The oidc-provider configuration of one instance. */
export function providerConfiguration(
  core: Core,
  instanceId: string,
  keys: InstanceKeyMaterial,
  prefix: string,
): Configuration {
  const issuer = issuerFor(core.config, instanceId)
  const secure = issuer.startsWith('https:')
  return {
    adapter: createAdapterClass(core, instanceId) as never,
    jwks: keys.jwks as never,
    cookies: {
      keys: keys.cookieKeys,
      // Path-based instances share a host: scope the long-lived cookies to the instance.
      long: { path: prefix || '/', secure, httpOnly: true, sameSite: 'lax' },
      short: { secure, httpOnly: true, sameSite: 'lax' },
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
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
    findAccount: async (_ctx, sub) => {
      const account = findAccount(core, instanceId, sub)
      if (!account) return undefined
      return {
        accountId: account.id,
        claims: async () => ({
          sub: account.id,
          email: account.email,
          email_verified: account.emailVerified,
          name: account.name || undefined,
        }),
      }
    },
    interactions: { url: (_ctx, interaction) => `${prefix}/interaction/${interaction.uid}` },
    // Platform access tokens carry the account's epoch: a password change refuses earlier ones.
    extraTokenClaims: async (_ctx, token) => {
      const accountId = 'accountId' in token ? token.accountId : undefined
      if (instanceId !== PLATFORM || !accountId) return undefined
      const account = findAccount(core, instanceId, accountId)
      return account ? { [AUTH_EPOCH_CLAIM]: account.authEpoch } : undefined
    },
    // Every app of an instance belongs to its workspace: first-party, so consent is implied.
    loadExistingGrant: async (ctx) => {
      const { client, session, params } = ctx.oidc
      if (!client || !session?.accountId) return undefined
      const grantId = ctx.oidc.result?.consent?.grantId || session.grantIdFor(client.clientId)
      const grant = grantId
        ? await ctx.oidc.provider.Grant.find(grantId)
        : new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId })
      if (!grant) return undefined
      grant.addOIDCScope(String(params?.scope ?? 'openid'))
      for (const resource of [ctx.oidc.params?.resource ?? []].flat() as string[]) {
        grant.addResourceScope(resource, String(params?.scope ?? ''))
      }
      await grant.save()
      return grant
    },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      userinfo: { enabled: true },
      resourceIndicators: {
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
      },
      deviceFlow: {
        enabled: true,
        userCodeInputSource: (ctx, form, _out, err) => {
          // After an error oidc-provider re-renders this form with a CSRF secret kept in the
          // browser's session. A browser that sent no session cookie has no stored session (no
          // `exp`): that form could never be submitted, and oidc-provider would then fail to
          // persist the session (a 500). Ask for a fresh start instead, and leave the session be.
          if (err && typeof ctx.oidc.session?.exp !== 'number') {
            Object.assign(ctx.oidc.session ?? {}, { touched: false })
            return html(
              ctx,
              MessagePage({
                title: 'Page expired',
                kind: 'error',
                message:
                  'This form has expired or your browser did not send its cookie. Open the device page again and enter the code shown on your device.',
                link: { href: ctx.oidc.urlFor('code_verification'), label: 'Open the device page again' },
              }),
            )
          }
          return html(
            ctx,
            DeviceInputPage({
              safeForm: form,
              error: err
                ? 'userCode' in err || err.name === 'NoCodeError'
                  ? 'That code is not valid. Check it and try again.'
                  : 'The request could not be completed. Start again on your device.'
                : null,
            }),
          )
        },
        userCodeConfirmSource: (ctx, form, client, _info, userCode) =>
          html(
            ctx,
            DeviceConfirmPage({ safeForm: form, clientName: client.clientName ?? client.clientId, userCode }),
          ),
        successSource: (ctx) =>
          html(
            ctx,
            MessagePage({
              title: 'Device connected',
              message: 'You can close this window and return to your device.',
            }),
          ),
      },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: (ctx, form) =>
          html(ctx, LogoutPage({ safeForm: form, auto: Boolean(ctx.oidc.params?.id_token_hint) })),
        postLogoutSuccessSource: (ctx) =>
          html(ctx, MessagePage({ title: 'Signed out', message: 'You have been signed out.' })),
      },
    },
    ttl: {
      AccessToken: 3600,
      AuthorizationCode: 60,
      ClientCredentials: 3600,
      DeviceCode: 600,
      IdToken: 3600,
      Interaction: 3600,
      Grant: 14 * 24 * 3600,
      Session: 14 * 24 * 3600,
      RefreshToken: (_ctx, _token, client) =>
        // Rotated refresh tokens of public clients live shorter than confidential ones (RFC 9700 §4.14).
        client.tokenEndpointAuthMethod === 'none' ? 14 * 24 * 3600 : 30 * 24 * 3600,
    },
    rotateRefreshToken: true,
    renderError: async (ctx, out) => {
      const message = out.error_description ?? 'The request could not be completed.'
      await html(ctx, ErrorPage({ title: 'Something went wrong', message: String(message) }))
    },
  }
}

/** Builds the Provider of one instance. Client secrets are compared as SHA-256 digests. */
export function buildProvider(
  core: Core,
  instanceId: string,
  keys: InstanceKeyMaterial,
  prefix: string,
): Provider {
  const provider = new Provider(
    issuerFor(core.config, instanceId),
    providerConfiguration(core, instanceId, keys, prefix),
  )
  // The bridge forwards X-Forwarded-Proto/Host derived from the issuer.
  provider.proxy = true
  handleProviderErrors(core, provider, instanceId)
  provider.use(devicePolling(core, instanceId))
  provider.Client.prototype.compareClientSecret = function compareClientSecret(
    this: { clientSecret: string },
    actual: string,
  ) {
    return safeEqual(this.clientSecret, sha256Hex(actual))
  }
  return provider
}
