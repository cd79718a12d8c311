import { type AnyElysia, Elysia } from 'elysia'
import type { Core } from '../../core'
import { type ErrorSurface, errorsPlugin } from '../../shared/plugins/errors'
import { type HostedRequest, hostedRequests } from './hosted'

/**
 * What answers under every instance's issuer besides oidc-provider: the hosted pages and the
 * features' endpoints, each an Elysia app with the control plane's stack (TypeBox, AppError, the one
 * error mapping).
 */
export interface InstanceApp {
  /** Whether a request of this method to this path (below the issuer) is the app's. */
  matches(method: string, path: string): boolean
  /** Its answer; `body` already read (the plane's body limit). */
  handle(request: Request, body: Uint8Array | null, hosted: HostedRequest): Promise<Response>
}

/** A route's path as a pattern: `:name` one segment, `*` the rest. */
const patternOf = (path: string) =>
  new RegExp(
    `^${path
      .split('/')
      .map((part) =>
        part.startsWith(':') ? '[^/]+' : part === '*' ? '.*' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
      )
      .join('/')}$`,
  )

/**
 * Mounts the plugins behind the one error mapping: the hosted pages' refusals are pages, the
 * features' endpoints' JSON.
 */
export function mountInstanceApp(
  core: Core,
  plugins: readonly AnyElysia[],
  surface: ErrorSurface,
): InstanceApp {
  const app = plugins.reduce<AnyElysia>(
    (mounted, plugin) => mounted.use(plugin),
    new Elysia({ name: 'instance-app', seed: surface }).use(errorsPlugin(core.log, surface)),
  )
  const routes = app.routes.map((r) => ({ method: r.method, pattern: patternOf(r.path) }))
  return {
    matches: (method, path) =>
      routes.some(
        (r) =>
          (r.method === method || r.method === 'ALL' || (method === 'HEAD' && r.method === 'GET')) &&
          r.pattern.test(path),
      ),
    handle: async (request, body, hosted) => {
      const url = new URL(request.url)
      // The app's routes are below the issuer: the request is addressed to the path below it.
      const local = new Request(new URL(`${hosted.path}${hosted.search}`, url.origin), {
        method: request.method,
        headers: request.headers,
        body: body as BodyInit | null,
      })
      hostedRequests.set(local, hosted)
      return app.handle(local)
    },
  }
}
