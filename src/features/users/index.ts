import type { Feature } from '../feature'
import { userPages } from './pages'
import { userRoutes } from './routes'

/** A workspace's users and invitations (their rows are the identity plane's accounts). */
export const feature: Feature = {
  name: 'users',
  routes: ({ core, auth }) => userRoutes(core, auth),
  pages: ({ core, auth }) => userPages(core, auth),
  nav: [{ label: 'Users', path: 'users', place: 'workspace' }],
}
