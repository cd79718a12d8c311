import * as oidc from 'openid-client'
import type { Core } from '../../src/core'
import { apps } from '../../src/features/apps/schema'
import { loginPolicies } from '../../src/features/login-policy/schema'
import { workspaceMembers, workspaces } from '../../src/features/workspaces/schema'
import { DEFAULT_LOGIN_POLICY, ensureInstanceKeys, type LoginPolicy } from '../../src/identity'
import { randomToken, sha256Hex } from '../../src/shared/crypto'
import { newId, newWorkspaceId } from '../../src/shared/ids'

/**
 * The login policy of the tests' workspaces: DESIGN's defaults, except that an unverified address
 * may sign in (most tests sign accounts up and in at once); a test of a rule passes its own.
 */
export const TEST_LOGIN_POLICY: LoginPolicy = { ...DEFAULT_LOGIN_POLICY, requireEmailVerification: false }

/** An active workspace owned by `ownerId`, with its instance keys and login policy, as provisioning leaves it. */
export async function activeWorkspace(
  core: Core,
  ownerId = 'usr_owner',
  policy: Partial<LoginPolicy> = {},
): Promise<string> {
  const id = newWorkspaceId()
  const now = core.clock.now()
  await core.db
    .insert(workspaces)
    .values({ id, name: 'Acme', ownerId, state: 'active', createdAt: now, updatedAt: now })
  await core.db
    .insert(workspaceMembers)
    .values({ workspaceId: id, accountId: ownerId, role: 'owner', createdAt: now, updatedAt: now })
  await ensureInstanceKeys(core, id)
  await core.db
    .insert(loginPolicies)
    .values({ workspaceId: id, ...TEST_LOGIN_POLICY, ...policy, updatedAt: now })
  return id
}

export async function registerApp(
  core: Core,
  workspaceId: string,
  input: {
    type: 'web' | 'spa' | 'native'
    redirectUris: string[]
    postLogoutRedirectUris?: string[]
    name?: string
  },
): Promise<{ clientId: string; clientSecret: string | null }> {
  const clientId = randomToken(16)
  const clientSecret = input.type === 'web' ? randomToken(32) : null
  await core.db.insert(apps).values({
    id: newId('app'),
    workspaceId,
    name: input.name ?? `${input.type} app`,
    clientId,
    clientSecretHash: clientSecret ? sha256Hex(clientSecret) : null,
    appType: input.type,
    redirectUris: input.redirectUris,
    postLogoutRedirectUris: input.postLogoutRedirectUris ?? [],
    devMode: true,
    createdAt: core.clock.now(),
  })
  return { clientId, clientSecret }
}

/** An authorization request with PKCE (and consent, so offline_access yields a refresh token). */
export async function pkceAuthorization(
  config: oidc.Configuration,
  redirectUri: string,
  scope = 'openid email offline_access',
): Promise<{ url: URL; verifier: string }> {
  const verifier = oidc.randomPKCECodeVerifier()
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope,
    prompt: 'consent',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  })
  return { url, verifier }
}

/** A public (spa) app of the workspace redirecting to `redirectUri`, and openid-client's view of it over http. */
export async function publicClient(core: Core, baseUrl: string, workspaceId: string, redirectUri: string) {
  const app = await registerApp(core, workspaceId, { type: 'spa', redirectUris: [redirectUri] })
  const config = await oidc.discovery(
    new URL(`${baseUrl}/i/${workspaceId}`),
    app.clientId,
    undefined,
    oidc.None(),
    {
      execute: [oidc.allowInsecureRequests],
    },
  )
  return { app, config }
}

/**
 * The client credentials grant at an issuer's token endpoint, as a confidential app sends it (Basic);
 * `headers` adds to it (an `X-Forwarded-For` behind a trusted proxy).
 */
export function clientCredentials(
  issuer: string,
  clientId: string,
  secret: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${issuer}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${btoa(`${clientId}:${secret}`)}`,
      'content-type': 'application/x-www-form-urlencoded',
      ...headers,
    },
    body: 'grant_type=client_credentials',
  })
}
