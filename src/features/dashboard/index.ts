import type { Feature } from '../feature'
import { assetRoutes } from './assets'
import { frontRoutes } from './front'

/** What every dashboard page shares: its static assets, and `/` leading to it. */
export const feature: Feature = {
  name: 'dashboard',
  pages: () => assetRoutes().use(frontRoutes()),
}
