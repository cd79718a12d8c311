import { openapi } from '@elysiajs/openapi'
import { Elysia } from 'elysia'
import { VERSION } from './config'
import type { Core } from './core'
import { healthRoutes } from './features/health/routes'
import { errorsPlugin } from './shared/plugins/errors'
import { requestLogPlugin } from './shared/plugins/request-log'

/** Composes the control plane. Tests import this and drive it through `app.handle`. */
export function createApp(core: Core) {
  return (
    new Elysia()
      // Error mapping and request ids first, so every route below is covered.
      .use(errorsPlugin(core.log))
      .use(requestLogPlugin(core.log))
      .use(
        openapi({
          path: '/docs',
          specPath: '/openapi.json',
          documentation: {
            info: {
              title: 'Gatehouse API',
              version: VERSION,
              description: 'Control plane of the Gatehouse authentication platform.',
            },
          },
          exclude: { paths: ['/docs', '/openapi.json'] },
        }),
      )
      .use(healthRoutes(core))
  )
}

export type App = ReturnType<typeof createApp>
