import type { Feature } from '../feature'
import { appClientSource } from './client-source'
import { appPages } from './pages'
import { appRoutes } from './routes'
import { deleteWorkspaceApps } from './service'

/** A workspace's OIDC applications; the identity plane reads its clients from them, live. */
export const feature: Feature = {
  name: 'apps',
  routes: ({ core, auth }) => appRoutes(core, auth),
  pages: ({ core, auth, sidebar }) => appPages(core, auth, sidebar),
  nav: [{ label: 'Apps', path: 'apps', place: 'sidebar', order: 10 }],
  teardown: deleteWorkspaceApps,
  identity: (core) => ({ clients: appClientSource(core) }),
}
