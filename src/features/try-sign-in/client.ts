import type { Core } from '../../core'
import { type BuiltInClient, issuerFor, localJwks } from '../../identity'

/**
 * The prefix of every workspace's built-in "Try sign-in" client. No app can hold such an id: an
 * app's client id is 22 random characters, and this one is longer.
 */
const TRY_CLIENT_PREFIX = 'gatehouse-try-'

/** The client id of a workspace's try client. */
const tryClientId = (workspaceId: string) => `${TRY_CLIENT_PREFIX}${workspaceId}`

/**
 * The dashboard's own relying party of a workspace's instance ("Try sign-in"): a public client
 * (code + PKCE S256, RFC 7636) that only that instance serves, so a developer sees the workspace's
 * sign-in pages, policy, second factors and IdPs act as any app of it would. Defined here, like the
 * platform's clients, rather than stored (the engine's `builtInClients`): it is no app of the
 * workspace, is never listed or counted as one, and its redirect URI follows the current BASE_URL.
 */
export function tryClient(core: Core, workspaceId: string) {
  return {
    issuer: issuerFor(core.config, workspaceId),
    clientId: tryClientId(workspaceId),
    redirectUri: `${core.config.baseUrl}/app/workspaces/${workspaceId}/try/callback`,
    scope: 'openid profile email tenants',
    /** The instance's public keys, to verify its ID tokens without HTTP. */
    jwks: () => localJwks(core, workspaceId),
  }
}

/** The try client as every workspace instance serves it (the platform's has none). */
export const tryBuiltInClient = (core: Core): BuiltInClient => ({
  clientId: tryClientId,
  record: (workspaceId) => {
    const own = tryClient(core, workspaceId)
    return {
      clientId: own.clientId,
      name: 'Gatehouse dashboard (Try sign-in)',
      clientSecretHash: null,
      type: 'spa',
      redirectUris: [own.redirectUri],
      postLogoutRedirectUris: [],
      extraGrants: [],
    }
  },
})
