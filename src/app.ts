import { openapi } from '@elysiajs/openapi'
import { type TSchema, TypeGuard } from '@sinclair/typebox'
import type { Server } from 'bun'
import { type AnyElysia, Elysia } from 'elysia'
import { authPlugin } from './access/guard'
import { guardOf, type SecurityRequirement, securityOf, tenantLevelOf } from './access/registry'
import { VERSION } from './config'
import type { Core } from './core'
import type { NodeLock } from './db/serve-lock'
import { entriesOf, type Feature, type FeatureContext, features as productFeatures } from './features'
import { type Caller, type IdentityPlane, issuerFor, logoImageSource, PLATFORM, type Route } from './identity'
import { API_TAGS, apiDescription, securitySchemes } from './shared/api-document'
import { type Cidr, clientAddress, fromTrustedProxy } from './shared/client-address'
import { registerFormats } from './shared/formats'
import { gcPacer, idleCollector } from './shared/gc-pacing'
import type { NodeWarnings } from './shared/node-warnings'
import { bodyLimitPlugin } from './shared/plugins/body-limit'
import { errorsPlugin } from './shared/plugins/errors'
import { addressLimitPlugin, controlPlaneLimit } from './shared/plugins/rate-limit'
import { requestIdFor, requestLogPlugin } from './shared/plugins/request-log'
import { securityHeadersPlugin } from './shared/plugins/security-headers'
import { baseSecurityHeaders } from './shared/security-headers'
import { sessionCookieFor } from './shared/session-cookie'
import { LAYOUT_STYLE_HASH } from './shared/views/hosted-layout'

interface AppDeps {
  identity: IdentityPlane
  /** The features to serve; the product's list unless a test passes its own. */
  features?: Feature[]
  /** The node lock `serve` holds, for /healthz (tests without one leave it out). */
  nodeLock?: Pick<NodeLock, 'state'>
}

/**
 * Composes the control plane: the cross-cutting plugins, then every feature's routes and pages.
 * Tests import this and drive it through `app.handle` or a server.
 */
export function createApp(core: Core, { identity, features = productFeatures, nodeLock }: AppDeps) {
  registerFormats()
  const ctx: FeatureContext = {
    core,
    auth: createAuth(core, features),
    identity,
    nav: features.flatMap((f) => f.nav ?? []),
    sidebar: entriesOf(
      features.flatMap((f) => f.nav ?? []),
      'sidebar',
    ),
    nodeLock,
  }
  // The document's routes, read when it is asked for: by then every feature's routes are in.
  let routes = (): readonly DocumentedRoute[] => []
  const app = new Elysia()
    // Error mapping and request ids first, so every route below is covered.
    .use(errorsPlugin(core.log))
    .use(requestLogPlugin(core.log, core.config.trustedProxies))
    .use(
      securityHeadersPlugin({
        https: core.config.baseUrl.startsWith('https:'),
        formActions: [new URL(issuerFor(core.config, PLATFORM)).origin],
        // /app/signed-out is drawn with the hosted pages' layout.
        styleHashes: [LAYOUT_STYLE_HASH],
        // Settings → Branding shows the workspace's logo, served by its instance.
        imageSources: [logoImageSource(core.config)],
        // /docs (the API reference) and /dev/outbox bring their own inline assets.
        cspExempt: ['/docs', '/dev/outbox'],
      }),
    )
    .use(bodyLimitPlugin(features.flatMap((f) => f.bodyLimits ?? [])))
    .use(
      addressLimitPlugin(core.limiter, (request, server) =>
        clientAddress(request, server, core.config.trustedProxies, core.warnings),
      ),
    )
    .use(
      withLiteralColons(
        withSecurity(
          () => routes(),
          withOptionalBodies(
            () => routes(),
            openapi({
              // /docs is ours (features/docs): the plugin's page loads Scalar from a CDN.
              provider: null,
              path: '/docs',
              specPath: '/openapi.json',
              documentation: {
                info: {
                  title: 'Gatehouse API',
                  version: VERSION,
                  description: apiDescription(core.config.rateLimits),
                },
                tags: API_TAGS,
                components: { securitySchemes: securitySchemes(sessionCookieFor(core.config.baseUrl)) },
              },
              exclude: { paths: ['/docs', '/openapi.json'] },
            }),
          ),
        ),
      ),
    )
  // The JSON API first, then the pages: the API reference lists operations in this order.
  for (const f of features) if (f.routes) app.use(f.routes(ctx))
  for (const f of features) if (f.pages) app.use(f.pages(ctx))
  routes = () => app.routes
  return app
}

export type App = ReturnType<typeof createApp>

/** A route as the app's table lists it, as far as the API document needs it. */
interface DocumentedRoute {
  method: string
  path: string
  hooks: { body?: TSchema; transform?: unknown }
}

type DocumentPaths<O> = Record<string, Record<string, O>>
const pathsOf = <O>(response: unknown): DocumentPaths<O> =>
  (response as { paths?: DocumentPaths<O> } | null)?.paths ?? {}
const documentPath = (path: string) => path.replace(/:(\w+)/g, '{$1}')

/**
 * Each operation's security, read from what the auth guard asks of its route (the route scope
 * registry), so the document cannot drift from what the server enforces.
 */
function withSecurity(routes: () => readonly DocumentedRoute[], openapiPlugin: AnyElysia) {
  return new Elysia({ name: 'openapi-security' })
    .onAfterHandle(({ response }) => {
      const paths = pathsOf<{ security?: SecurityRequirement[] }>(response)
      for (const r of routes()) {
        const op = paths[documentPath(r.path)]?.[r.method.toLowerCase()]
        if (op) op.security = securityOf(guardOf(r.hooks), tenantLevelOf(r.hooks), r.method, r.path)
      }
    })
    .use(openapiPlugin)
}

/**
 * @elysiajs/openapi marks every request body required; a route whose body schema is optional
 * (`DELETE /v1/workspaces/{id}`, whose SPEC request is none) says so in the document.
 */
function withOptionalBodies(routes: () => readonly DocumentedRoute[], openapiPlugin: AnyElysia) {
  return new Elysia({ name: 'openapi-optional-bodies' })
    .onAfterHandle(({ response }) => {
      const paths = pathsOf<{ requestBody?: { required?: boolean } }>(response)
      for (const r of routes()) {
        if (!r.hooks.body || !TypeGuard.IsOptional(r.hooks.body)) continue
        const op = paths[documentPath(r.path)]?.[r.method.toLowerCase()]
        if (op?.requestBody) op.requestBody.required = false
      }
    })
    .use(openapiPlugin)
}

/**
 * Elysia reads a colon anywhere in a path as a parameter, so SPEC's `/tenants:batch` is a route
 * whose handler checks the literal; the OpenAPI document writes it as SPEC does, not `/tenants{batch}`.
 */
function withLiteralColons(openapiPlugin: AnyElysia) {
  return new Elysia({ name: 'openapi-literal-colons' })
    .onAfterHandle(({ response }) => {
      const paths = pathsOf<{ parameters?: { name: string; in: string }[] }>(response)
      for (const path of Object.keys(paths)) {
        const literals = [...path.matchAll(/[^/]\{(\w+)\}/g)].map((m) => m[1])
        if (!literals.length) continue
        const operations = paths[path]!
        for (const op of Object.values(operations))
          op.parameters = op.parameters?.filter((p) => !(p.in === 'path' && literals.includes(p.name)))
        paths[path.replace(/([^/])\{(\w+)\}/g, '$1:$2')] = operations
        delete paths[path]
      }
    })
    .use(openapiPlugin)
}

/**
 * The one auth guard every feature's routes use. Who is calling is asked of the features'
 * resolvers in list order; a new kind of caller joins as a feature's resolver, not in routes.
 */
export function createAuth(core: Core, features: Feature[] = productFeatures) {
  const finders = features.flatMap((f) => (f.workspaceAccess ? [f.workspaceAccess(core)] : []))
  if (finders.length !== 1) throw new Error(`exactly one feature must find workspaces (${finders.length} do)`)
  const findAccess = finders[0]!
  return authPlugin({
    resolvers: features.flatMap((f) => f.principals?.(core) ?? []),
    findAccess,
    clientIp: (request, server) => clientAddress(request, server, core.config.trustedProxies, core.warnings),
    limit: controlPlaneLimit(core.limiter, findAccess),
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
  const trusted = core.config.trustedProxies
  const routes = new Map<string, Route | null>()
  const pace = gcPacer()
  const settle = idleCollector()
  // Not async: a cached identity answer goes out without a promise.
  return (request: Request, server: Server<unknown>): Promise<Response> | Response => {
    pace()
    settle()
    const raw = request.url
    let route = routes.get(raw)
    let url: URL | undefined
    if (route === undefined) {
      // Bun builds request.url from the Host header; one that makes no URL is a 400 (RFC 9112 §3.2).
      const parsed = URL.parse(raw)
      if (!parsed)
        return Response.json({ detail: 'Invalid Host header' }, { status: 400, headers: baseHeaders })
      route = identity.route(parsed.host, parsed.pathname)
      if (raw.length <= SEEN_URL_LENGTH && !raw.includes('?')) {
        if (routes.size >= SEEN_URLS) routes.clear()
        routes.set(raw, route)
      }
      url = parsed
    }
    if (route === null) return app.fetch(request)
    return identity.handle(request, route, new FrontDoorCaller(request, server, trusted, core.warnings), url)
  }
}

/**
 * Request URLs the front door remembers the route of (an instance's, or the control plane's), as
 * Bun gives them: parsing and cutting up the URL was the largest cost of a cached discovery or JWKS
 * answer, and clients ask the same few URLs again and again. Only short URLs without a query are
 * kept (a query tends to differ per request), so the memo holds at most ~0.5 MiB, and it starts over
 * when full. One string always routes alike, whoever asks.
 */
const SEEN_URLS = 1_024
const SEEN_URL_LENGTH = 256

/** Who sent a request to an instance, as the front door sees it; each part resolved when asked. */
class FrontDoorCaller implements Caller {
  constructor(
    private readonly request: Request,
    private readonly server: Server<unknown>,
    private readonly trusted: readonly Cidr[],
    private readonly warnings: NodeWarnings,
  ) {}

  ip(): string {
    return clientAddress(this.request, this.server, this.trusted, this.warnings)
  }

  requestId(): string {
    return requestIdFor(this.request, fromTrustedProxy(this.request, this.server, this.trusted))
  }
}
