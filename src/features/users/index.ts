import type { Feature } from '../feature'
import { userPages } from './pages'
import { userRoutes } from './routes'

/** A workspace's users and invitations (their rows are the identity plane's accounts). */
export const feature: Feature = {
  name: 'users',
  routes: ({ core, auth }) => userRoutes(core, auth),
  pages: ({ core, auth, sidebar }) => userPages(core, auth, sidebar),
  nav: [{ label: 'Users', path: 'users', place: 'sidebar', order: 20 }],
}
