import type { Configuration } from 'oidc-provider'

const DAY = 24 * 3600

/**
 * Seconds a device flow client waits between token requests (RFC 8628 §3.2 `interval`). Here, in a
 * module that loads nothing of oidc-provider, because the control plane's descriptor of the platform
 * client names it too (platform.ts, which job workers load).
 */
export const DEVICE_POLL_INTERVAL_S = 5

/** An access token's lifetime where its resource server (resources.ts) names none other. */
export const ACCESS_TOKEN_TTL = 3600

/** A resource server's own TTL (a feature's, resources.ts); a fixed number here would override it. */
const accessTokenTtl = (_ctx: unknown, token: { resourceServer?: { accessTokenTTL?: number } }) =>
  token.resourceServer?.accessTokenTTL ?? ACCESS_TOKEN_TTL

/** Lifetimes in seconds of what an instance issues. */
export const TTL: Configuration['ttl'] = {
  AccessToken: accessTokenTtl,
  AuthorizationCode: 60,
  ClientCredentials: accessTokenTtl,
  DeviceCode: 600,
  IdToken: 3600,
  Interaction: 3600,
  Grant: 14 * DAY,
  Session: 14 * DAY,
  RefreshToken: (_ctx, _token, client) =>
    // Rotated refresh tokens of public clients live shorter than confidential ones (RFC 9700 §4.14).
    client.tokenEndpointAuthMethod === 'none' ? 14 * DAY : 30 * DAY,
}
