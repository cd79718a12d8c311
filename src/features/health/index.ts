import type { Feature } from '../feature'
import { healthRoutes } from './routes'

/** `/healthz`: whether this node and its store answer. */
export const feature: Feature = {
  name: 'health',
  routes: ({ core }) => healthRoutes(core),
}
