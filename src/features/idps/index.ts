import { Elysia } from 'elysia'
import type { Feature } from '../feature'
import { idpRoutes } from './routes'
import { deleteWorkspaceIdps } from './service'

/**
 * External identity providers (DESIGN "IdPs"): a workspace's Google, GitHub, Microsoft and generic
 * OpenID Connect providers. This is the API; the sign-in through them is still to come (issue 29).
 */
export const feature: Feature = {
  name: 'idps',
  routes: ({ core, auth }) => new Elysia({ name: 'idps' }).use(idpRoutes(core, auth)),
  teardown: deleteWorkspaceIdps,
}
