import { Elysia } from 'elysia'
import type { Feature } from '../feature'
import { idpPages } from './pages'
import { idpRoutes } from './routes'
import { deleteWorkspaceIdps } from './service'

/**
 * External identity providers (DESIGN "IdPs"): a workspace's Google, GitHub, Microsoft and generic
 * OpenID Connect providers, through the API and on Settings → Identity providers. The sign-in
 * through them is still to come (issue 29).
 */
export const feature: Feature = {
  name: 'idps',
  routes: ({ core, auth }) => new Elysia({ name: 'idps' }).use(idpRoutes(core, auth)),
  pages: ({ core, auth }) => idpPages(core, auth),
  nav: [{ label: 'Identity providers', path: 'settings/idps', place: 'settings' }],
  teardown: deleteWorkspaceIdps,
}
