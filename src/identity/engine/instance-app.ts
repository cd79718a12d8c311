import { type AnyElysia, Elysia } from 'elysia'
import type { Core } from '../../core'
import { errorsPlugin } from '../../shared/plugins/errors'
import { endpointInstances, type InstanceRef } from './extension'

/** The features' endpoints under every workspace instance's issuer, as one Elysia app. */
export interface InstanceEndpoints {
  /** Whether a request of this method to this path (below the issuer) is a feature endpoint's. */
  matches(method: string, path: string): boolean
  /** Its answer; `path` is below the issuer, `body` already read (the plane's body limit). */
  handle(request: Request, path: string, body: Uint8Array | null, instance: InstanceRef): Promise<Response>
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
 * Mounts the features' endpoint plugins behind the control plane's error mapping (TypeBox failures
 * 422, AppError its status): null when no feature has any, so the plane asks nothing more of a
 * request.
 */
export function mountEndpoints(core: Core, plugins: readonly AnyElysia[]): InstanceEndpoints | null {
  if (plugins.length === 0) return null
  const app = plugins.reduce<AnyElysia>(
    (mounted, plugin) => mounted.use(plugin),
    new Elysia({ name: 'instance-endpoints' }).use(errorsPlugin(core.log)),
  )
  const routes = app.routes.map((r) => ({ method: r.method, pattern: patternOf(r.path) }))
  return {
    matches: (method, path) =>
      routes.some(
        (r) =>
          (r.method === method || r.method === 'ALL' || (method === 'HEAD' && r.method === 'GET')) &&
          r.pattern.test(path),
      ),
    handle: async (request, path, body, instance) => {
      const url = new URL(request.url)
      const local = new Request(new URL(`${path}${url.search}`, url.origin), {
        method: request.method,
        headers: request.headers,
        body: body as BodyInit | null,
      })
      endpointInstances.set(local, instance)
      return app.handle(local)
    },
  }
}
