import { Elysia } from 'elysia'
import type { Feature } from '../feature'
import { idpPages } from './pages'
import { Broker } from './protocol'
import { idpRoutes } from './routes'
import { activeIdpsOf, deleteWorkspaceIdps } from './service'

/**
 * External identity providers (DESIGN "IdPs"): a workspace's Google, GitHub, Microsoft and generic
 * OpenID Connect providers, through the API and on Settings → Identity providers, and on the sign-in page of its
 * instance (the identity plane asks for them).
 */
export const feature: Feature = {
  name: 'idps',
  routes: ({ core, auth }) => new Elysia({ name: 'idps' }).use(idpRoutes(core, auth)),
  pages: ({ core, auth, sidebar }) => idpPages(core, auth, sidebar),
  nav: [{ label: 'Identity providers', path: 'settings/idps', place: 'settings', order: 20 }],
  teardown: deleteWorkspaceIdps,
  // The workspace's IdPs, and the broker every instance signs in through them with (the platform's too).
  identity: (core) => ({ externalIdps: activeIdpsOf(core), externalSignIn: new Broker(core) }),
}
