import type { Feature } from '../feature'
import { healthRoutes } from './routes'

/** `/healthz`: whether this node and its store answer, and whether it holds its node lock. */
export const feature: Feature = {
  name: 'health',
  routes: ({ core, nodeLock }) => healthRoutes(core, nodeLock),
}
