import type { Feature } from '../feature'
import { tryBuiltInClient } from './client'
import { trySignInPages } from './pages'
import { deleteWorkspaceTrySignIns, purgeExpiredTrySignIns } from './service'

/**
 * "Try sign-in": the dashboard signs in at a workspace's hosted pages through its instance's
 * built-in try client, and shows what an app would receive (ID token claims, userinfo, `amr`).
 */
export const feature: Feature = {
  name: 'try-sign-in',
  identity: (core) => ({ builtInClients: [tryBuiltInClient(core)] }),
  pages: ({ core, auth, identity, sidebar }) => trySignInPages(core, auth, identity, sidebar),
  purges: [purgeExpiredTrySignIns],
  teardown: deleteWorkspaceTrySignIns,
}
