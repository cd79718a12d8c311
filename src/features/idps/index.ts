import { Elysia } from 'elysia'
import type { Feature } from '../feature'
import { idpRoutes } from './routes'
import { activeIdpsOf, deleteWorkspaceIdps } from './service'

/**
 * External identity providers (DESIGN "IdPs"): a workspace's Google, GitHub, Microsoft and generic
 * OpenID Connect providers, on the sign-in page of its instance (the identity plane asks for them).
 */
export const feature: Feature = {
  name: 'idps',
  routes: ({ core, auth }) => new Elysia({ name: 'idps' }).use(idpRoutes(core, auth)),
  teardown: deleteWorkspaceIdps,
  identity: (core) => ({ externalIdps: activeIdpsOf(core) }),
}
