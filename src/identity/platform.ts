import { createHmac } from 'node:crypto'
import type { Core } from '../core'
import { apps } from '../features/apps/schema'
import { sha256Hex } from '../shared/crypto'
import { PLATFORM } from './instances'
import { ensureInstanceKeys } from './keys'

/** The control plane's own confidential client of the platform instance. */
export const CONSOLE_CLIENT_ID = 'gatehouse-console'
/** The public client headless tools use through the device flow (RFC 8628). */
export const CLI_CLIENT_ID = 'gatehouse-cli'

export const consoleRedirectUri = (core: Core) => `${core.config.baseUrl}/v1/auth/callback`
export const consolePostLogoutUri = (core: Core) => `${core.config.baseUrl}/app/signed-out`

/** Derived from the master key, so it is never stored and survives restarts unchanged. */
export const consoleClientSecret = (core: Core) =>
  createHmac('sha256', core.config.secretKey).update('gatehouse-console-client-secret').digest('base64url')

/**
 * Makes the platform instance ready at start-up: its keys, and its two first-party clients with
 * redirect URIs following the current BASE_URL. Idempotent.
 */
export async function ensurePlatformInstance(core: Core): Promise<void> {
  await ensureInstanceKeys(core, PLATFORM)
  const now = core.clock.now()
  const clients = [
    {
      id: 'app_platform_console',
      clientId: CONSOLE_CLIENT_ID,
      name: 'Gatehouse',
      clientSecretHash: sha256Hex(consoleClientSecret(core)),
      appType: 'web' as const,
      redirectUris: [consoleRedirectUri(core)],
      postLogoutRedirectUris: [consolePostLogoutUri(core)],
      extraGrants: [],
    },
    {
      id: 'app_platform_cli',
      clientId: CLI_CLIENT_ID,
      name: 'Gatehouse CLI',
      clientSecretHash: null,
      appType: 'native' as const,
      redirectUris: ['http://127.0.0.1/callback'],
      postLogoutRedirectUris: [],
      extraGrants: ['urn:ietf:params:oauth:grant-type:device_code'],
    },
  ]
  for (const c of clients) {
    const { id, ...rest } = c
    core.db
      .insert(apps)
      .values({ id, instanceId: PLATFORM, devMode: false, createdAt: now, ...rest })
      .onConflictDoUpdate({ target: apps.id, set: rest })
      .run()
  }
}
