import { createHmac } from 'node:crypto'
import type { Core } from '../core'
import { sha256Hex } from '../shared/crypto'
import type { ClientRecord } from './deps'
import { localJwks } from './engine/keys'
import { issuerFor, PLATFORM } from './instances'
import { DEVICE_POLL_INTERVAL_S } from './provider/ttl'

/** The control plane's own confidential client of the platform instance. */
const CONSOLE_CLIENT_ID = 'gatehouse-console'
/** The public client headless tools use through the device flow (RFC 8628). */
const CLI_CLIENT_ID = 'gatehouse-cli'

/** Audience of platform access tokens: the control plane's JSON API. */
export const controlPlaneAudience = (core: Core) => `${core.config.baseUrl}/v1`

/** Derived from the master key, so it is never stored and survives restarts unchanged. */
const consoleClientSecret = (core: Core) =>
  createHmac('sha256', core.config.secretKey).update('gatehouse-console-client-secret').digest('base64url')

/**
 * What the dashboard login (features/auth) needs as an OIDC client of the platform instance: its
 * console client (code + PKCE) and the CLI's (device flow), and what to check the tokens against.
 */
export function platformClient(core: Core) {
  return {
    issuer: issuerFor(core.config, PLATFORM),
    clientId: CONSOLE_CLIENT_ID,
    clientSecret: consoleClientSecret(core),
    redirectUri: `${core.config.baseUrl}/v1/auth/callback`,
    postLogoutRedirectUri: `${core.config.baseUrl}/app/signed-out`,
    cliClientId: CLI_CLIENT_ID,
    audience: controlPlaneAudience(core),
    /** The platform's public keys, to verify what it issued without HTTP. */
    jwks: () => localJwks(core, PLATFORM),
    devicePollIntervalSeconds: DEVICE_POLL_INTERVAL_S,
  }
}

/**
 * The platform instance's clients, defined here rather than stored: their redirect URIs follow
 * the current BASE_URL and the console's secret the master key, with nothing to keep in step.
 */
export function platformClients(core: Core): ReadonlyMap<string, ClientRecord> {
  const own = platformClient(core)
  return new Map<string, ClientRecord>([
    [
      CONSOLE_CLIENT_ID,
      {
        clientId: CONSOLE_CLIENT_ID,
        name: 'Gatehouse',
        clientSecretHash: sha256Hex(own.clientSecret),
        type: 'web',
        redirectUris: [own.redirectUri],
        postLogoutRedirectUris: [own.postLogoutRedirectUri],
        extraGrants: [],
      },
    ],
    [
      CLI_CLIENT_ID,
      {
        clientId: CLI_CLIENT_ID,
        name: 'Gatehouse CLI',
        clientSecretHash: null,
        type: 'native',
        redirectUris: ['http://127.0.0.1/callback'],
        postLogoutRedirectUris: [],
        extraGrants: ['urn:ietf:params:oauth:grant-type:device_code'],
      },
    ],
  ])
}
