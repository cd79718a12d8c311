import type { Feature } from '../feature'
import { loginPolicyPages } from './pages'
import { loginPolicyRoutes } from './routes'
import { createDefaultLoginPolicy, deleteWorkspaceLoginPolicy, loginPolicyOf } from './service'

/**
 * The example feature (ARCHITECTURE.md "How to add a feature"): its table gets a row when a
 * workspace is provisioned and loses it when the workspace is deleted, and the identity plane asks
 * it for a workspace's policy, never reading its table.
 */
export const feature: Feature = {
  name: 'login-policy',
  routes: ({ core, auth }) => loginPolicyRoutes(core, auth),
  pages: ({ core, auth, sidebar }) => loginPolicyPages(core, auth, sidebar),
  nav: [{ label: 'Login policy', path: 'settings/login-policy', place: 'settings', order: 10 }],
  provision: [
    {
      name: 'login-policy',
      does: 'set up the login policy',
      run: (core, w) => createDefaultLoginPolicy(core, w.id),
    },
  ],
  teardown: deleteWorkspaceLoginPolicy,
  identity: (core) => ({ loginPolicy: loginPolicyOf(core) }),
}
