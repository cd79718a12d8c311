import { openapi } from '@elysiajs/openapi'
import type { Server } from 'bun'
import { Elysia } from 'elysia'
import { VERSION } from './config'
import type { Core } from './core'
import type { NodeLock } from './db/serve-lock'
import { appPages } from './features/apps/pages'
import { appRoutes } from './features/apps/routes'
import { authPages } from './features/auth/pages'
import { platformTokenResolver, sessionResolver } from './features/auth/principals'
import { authRoutes } from './features/auth/routes'
import { assetRoutes } from './features/dashboard/assets'
import { frontRoutes } from './features/dashboard/front'
import { docsRoutes } from './features/docs/routes'
import { healthRoutes } from './features/health/routes'
import { loginPolicyPages } from './features/login-policy/pages'
import { loginPolicyRoutes } from './features/login-policy/routes'
import { devOutboxRoutes } from './features/mail/routes'
import { userPages } from './features/users/pages'
import { userRoutes } from './features/users/routes'
import { workspacePages } from './features/workspaces/pages'
import { workspaceRoutes } from './features/workspaces/routes'
import { userScopes, workspaceFinder } from './features/workspaces/scopes'
import { createPlatformTokenVerifier, type IdentityPlane, issuerFor, PLATFORM } from './identity'
import { clientAddress } from './shared/client-address'
import { registerFormats } from './shared/formats'
import { authPlugin } from './shared/plugins/auth'
import { bodyLimitPlugin } from './shared/plugins/body-limit'
import { errorsPlugin } from './shared/plugins/errors'
import { requestLogPlugin } from './shared/plugins/request-log'
import { securityHeadersPlugin } from './shared/plugins/security-headers'
import { baseSecurityHeaders } from './shared/security-headers'
import { LAYOUT_STYLE_HASH } from './shared/views/hosted-layout'

export interface AppDeps {
  identity: IdentityPlane
  /** The node lock `serve` holds, for /healthz (tests without one leave it out). */
  nodeLock?: Pick<NodeLock, 'state'>
}

/** Composes the control plane. Tests import this and drive it through `app.handle` or a server. */
export function createApp(core: Core, { identity, nodeLock }: AppDeps) {
  registerFormats()
  const auth = createAuth(core)
  return (
    new Elysia()
      // Error mapping and request ids first, so every route below is covered.
      .use(errorsPlugin(core.log))
      .use(requestLogPlugin(core.log))
      .use(
        securityHeadersPlugin({
          https: core.config.baseUrl.startsWith('https:'),
          formActions: [new URL(issuerFor(core.config, PLATFORM)).origin],
          // /app/signed-out is drawn with the hosted pages' layout.
          styleHashes: [LAYOUT_STYLE_HASH],
          // /docs (the API reference) and /dev/outbox bring their own inline assets.
          cspExempt: ['/docs', '/dev/outbox'],
        }),
      )
      .use(bodyLimitPlugin())
      .use(
        openapi({
          // /docs is ours (features/docs): the plugin's page loads Scalar from a CDN.
          provider: null,
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
      .use(docsRoutes())
      .use(healthRoutes(core, nodeLock))
      .use(authRoutes(core, auth, identity))
      .use(workspaceRoutes(core, auth))
      .use(appRoutes(core, auth))
      .use(userRoutes(core, auth))
      .use(loginPolicyRoutes(core, auth))
      .use(workspacePages(core, auth))
      .use(appPages(core, auth))
      .use(userPages(core, auth))
      .use(loginPolicyPages(core, auth))
      .use(assetRoutes())
      .use(frontRoutes())
      .use(authPages())
      .use(devOutboxRoutes(core, auth))
  )
}

export type App = ReturnType<typeof createApp>

/**
 * The one auth guard every feature's routes use. Who is calling is asked in order: a platform
 * access token, then the dashboard session; machine keys and members' roles join here (a resolver,
 * a scope rule), not in routes.
 */
export function createAuth(core: Core) {
  return authPlugin({
    resolvers: [
      platformTokenResolver(createPlatformTokenVerifier(core), userScopes),
      sessionResolver(core, userScopes),
    ],
    findWorkspace: workspaceFinder(core),
  })
}

/**
 * The server's fetch handler, the front door of both planes: a request addressed to an identity
 * instance (by path or host) goes straight to the identity plane, before any control-plane
 * parsing or hooks; everything else to the control plane. Both answer with `X-Request-Id` and
 * leave one access-log line.
 */
export function createFetch(core: Core, app: App, { identity }: AppDeps) {
  const baseHeaders = baseSecurityHeaders(core.config.baseUrl.startsWith('https:'))
  return async (request: Request, server: Server<unknown>): Promise<Response> => {
    // Bun builds request.url from the Host header; one that makes no URL is a 400 (RFC 9112 §3.2).
    const url = URL.parse(request.url)
    if (!url) return Response.json({ detail: 'Invalid Host header' }, { status: 400, headers: baseHeaders })
    const clientIp = () => clientAddress(request, server, core.config.trustedProxies)
    return identity.handle(request, url, clientIp) ?? app.fetch(request)
  }
}
