import type { Feature } from '../feature'
import { docsRoutes } from './routes'

/** The API reference at `/docs` (the OpenAPI document itself is the app's). */
export const feature: Feature = {
  name: 'docs',
  routes: () => docsRoutes(),
  nav: [{ label: 'API docs', path: '/docs', place: 'sidebar', order: 100 }],
}
