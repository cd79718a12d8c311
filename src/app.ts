import { openapi } from '@elysiajs/openapi'
import { Elysia } from 'elysia'
import { VERSION } from './config'
import type { Core } from './core'
import { appPages } from './features/apps/pages'
import { appRoutes } from './features/apps/routes'
import { authPages } from './features/auth/pages'
import { authRoutes } from './features/auth/routes'
import { assetRoutes } from './features/dashboard/assets'
import { devOutboxRoutes } from './features/dev-outbox/routes'
import { healthRoutes } from './features/health/routes'
import { workspacePages } from './features/workspaces/pages'
import { workspaceRoutes } from './features/workspaces/routes'
import type { IdentityPlane } from './identity'
import { identityPlanePlugin } from './identity/bridge'
import { registerFormats } from './shared/formats'
import { errorsPlugin } from './shared/plugins/errors'
import { requestLogPlugin } from './shared/plugins/request-log'

export interface AppDeps {
  identity: IdentityPlane
}

/** Composes the control plane. Tests import this and drive it through `app.handle` or a server. */
export function createApp(core: Core, { identity }: AppDeps) {
  registerFormats()
  return (
    new Elysia()
      // Error mapping and request ids first, so every route below is covered.
      .use(errorsPlugin(core.log))
      .use(requestLogPlugin(core.log))
      // Requests addressed to an identity instance leave here for the bridge, before any parsing.
      .use(identityPlanePlugin(identity.bridge))
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
      .use(authRoutes(core, identity.bridge))
      .use(workspaceRoutes(core))
      .use(appRoutes(core))
      .use(workspacePages(core))
      .use(appPages(core))
      .use(assetRoutes())
      .use(authPages())
      .use(devOutboxRoutes(core))
  )
}

export type App = ReturnType<typeof createApp>
