import { createPlatformTokenVerifier } from '../../identity'
import type { Feature } from '../feature'
import { authPages } from './pages'
import { platformTokenResolver, sessionResolver } from './principals'
import { purgeExpiredAuthRows } from './purge'
import { authRoutes } from './routes'
import { endAccountSessions } from './sessions'

/**
 * Signing in to the platform: the dashboard's login through the platform instance, the device
 * flow, and the two ways a person proves who they are on the control plane (a platform access
 * token, then the dashboard session).
 */
export const feature: Feature = {
  name: 'auth',
  routes: ({ core, auth, identity }) => authRoutes(core, auth, identity),
  pages: ({ core }) => authPages(core),
  purges: [purgeExpiredAuthRows],
  identity: () => ({ sessions: { end: endAccountSessions } }),
  principals: (core) => [platformTokenResolver(createPlatformTokenVerifier(core)), sessionResolver(core)],
}
