import { Elysia } from 'elysia'
import type { Feature } from '../feature'
import { revokeRotatedKey } from './jobs'
import { machineKeyPages } from './pages'
import { machineKeyRoutes, tokenExchangeRoutes } from './routes'
import { deleteWorkspaceMachineKeys, purgeMachineKeyRows } from './service'

/**
 * Machine keys (DESIGN "Machine keys"): scoped, revocable credentials of one workspace for agents
 * and automation, and the jwt-bearer exchange (`POST /v1/auth/token`) that turns a key's signed
 * assertion into a 15-minute access token. The guard accepts those tokens through the auth
 * feature's bearer resolver (the platform signs them).
 */
export const feature: Feature = {
  name: 'machine-keys',
  routes: ({ core, auth }) =>
    new Elysia({ name: 'machine-keys' }).use(machineKeyRoutes(core, auth)).use(tokenExchangeRoutes(core)),
  pages: ({ core, auth, sidebar }) => machineKeyPages(core, auth, sidebar),
  nav: [{ label: 'Machine keys', path: 'settings/machine-keys', place: 'sidebar', order: 50 }],
  teardown: deleteWorkspaceMachineKeys,
  purges: [purgeMachineKeyRows],
  jobs: () => [revokeRotatedKey],
}
