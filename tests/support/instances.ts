import * as oidc from 'openid-client'
import type { Core } from '../../src/core'
import { apps } from '../../src/features/apps/schema'
import { workspaces } from '../../src/features/workspaces/schema'
import { ensureInstanceKeys } from '../../src/identity'
import { randomToken, sha256Hex } from '../../src/shared/crypto'
import { newId, newWorkspaceId } from '../../src/shared/ids'

/** An active workspace with its instance keys, as provisioning leaves it. */
export async function activeWorkspace(core: Core, ownerId = 'usr_owner'): Promise<string> {
  const id = newWorkspaceId()
  const now = core.clock.now()
  await core.db
    .insert(workspaces)
    .values({ id, name: 'Acme', ownerId, state: 'active', createdAt: now, updatedAt: now })
  await ensureInstanceKeys(core, id)
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
