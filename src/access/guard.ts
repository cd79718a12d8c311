import type { Server } from 'bun'
import { type Cookie, Elysia } from 'elysia'
import { AppError, forbidden, notFound, unauthorized } from '../shared/errors'
import { isUuid } from '../shared/formats'
import type { LimitedCall } from '../shared/plugins/rate-limit'
import type { Actor, Principal, UserPrincipal, WorkspaceRef } from './model'
import { registerGuard } from './registry'
import { RoutePath } from './route-path'
import {
  holdsScope,
  roleRefusal,
  type TenantLevel,
  type TenantReach,
  tenantReach,
  type WorkspaceScope,
} from './scopes'

/** The path's workspace and what a principal holds on it; undefined when it is none of its business. */
export type AccessFinder<W> = (
  workspaceId: string,
  principal: Principal,
) => Promise<{ workspace: W; scopes: readonly string[] } | undefined>

/** What a resolver may read of a request. */
export interface Credentials {
  request: Request
  cookie: Record<string, Cookie<unknown>>
  body: unknown
}

/**
 * Turns a request into a principal: null when the request carries no credential of its kind, an
 * AppError (401/403) when it carries one that fails.
 */
export type PrincipalResolver = (credentials: Credentials) => Principal | null | Promise<Principal | null>

interface AuthOptions<W extends WorkspaceRef> {
  /** Asked in order; the first principal found wins. */
  resolvers: PrincipalResolver[]
  findAccess: AccessFinder<W>
  /** The client's address (behind trusted proxies), for the audit log. */
  clientIp: (request: Request, server: Server<unknown> | null) => string | null
  /**
   * Counts the call against its rate limits once the guard knows who calls (and on which
   * workspace): the `X-RateLimit-*` headers to send, or a thrown 429. `principal` is null for a
   * request whose credentials failed, counted per client address.
   */
  limit?: (call: LimitedCall<W, Principal>) => Record<string, string> | Promise<Record<string, string>>
}

/** What a guard hook reads of the server and writes on the response (the rate-limit headers). */
interface Reply {
  server: Server<unknown> | null
  set: { headers: Record<string, unknown> }
}

/** What the guard found in `transform`, handed to the route by `resolve` once validation passed. */
interface Grant<W> {
  principal: Principal
  actor: Actor
  /** Set for `scope` routes. */
  workspace?: W
  /** What the principal holds on that workspace (a role's scope, or a key's scopes). */
  scopes?: readonly string[]
  /** Set for `tenantScope` routes: the tenants the principal may reach. */
  tenants?: TenantReach
}

/**
 * The one auth guard, built once in app.ts and handed to every feature's routes. Routes say what
 * they need in one word: `auth: true` (a person), `caller: true` (machine keys too),
 * `scope: 'workspace:write'` or, on a tenant's routes, `tenantScope: 'read'`; each gets `principal`
 * and the `actor` its audit entries name.
 *
 * Who is calling comes before what they sent, on every route (as Stripe and GitHub answer), in
 * DESIGN's order: 401 (no or failed credentials, and a session's CSRF 403), then on the JSON API a
 * path that names nothing (422: its format is public, whoever owns what), then 404 (a workspace
 * the caller cannot see) and 403 (a missing scope), then the body and query (422), whose details
 * are for a caller who may act. Elysia runs parse → transform → validation (params, query, body) →
 * resolve → handler, so the guard decides in `transform`, where the body is already parsed (a
 * form's `_csrf` included), and `resolve` hands the route what it found.
 */
export function authPlugin<W extends WorkspaceRef>({
  resolvers,
  findAccess,
  clientIp,
  limit = async () => ({}),
}: AuthOptions<W>) {
  async function principalOf(credentials: Credentials): Promise<Principal | null> {
    for (const resolve of resolvers) {
      const principal = await resolve(credentials)
      if (principal) return principal
    }
    return null
  }

  /** Who calls; a request without valid credentials is counted per address, then refused. */
  const authenticate = async ({ request, cookie, body }: Credentials, server: Server<unknown> | null) => {
    let principal: Principal | null
    try {
      principal = await principalOf({ request, cookie, body })
      if (!principal) throw unauthorized()
    } catch (e) {
      const headers = await limit({ request, principal: null, ip: clientIp(request, server) })
      if (e instanceof AppError) Object.assign(e.headers, headers)
      throw e
    }
    // DESIGN "Machine keys": their tokens act on the JSON API only, never on a dashboard page.
    if (principal.kind === 'key' && !new URL(request.url).pathname.startsWith('/v1/'))
      throw forbidden('Machine tokens are accepted on the JSON API only')
    return principal
  }
  /** Counts an identified call; its headers go on the response, whatever the route answers. */
  const count = async (
    request: Request,
    server: Server<unknown> | null,
    set: Reply['set'],
    principal: Principal,
    workspace?: W,
  ) => {
    Object.assign(set.headers, await limit({ request, principal, workspace, ip: clientIp(request, server) }))
  }
  const actorOf = (principal: Principal, request: Request, server: Server<unknown> | null): Actor => ({
    id: principal.id,
    ip: clientIp(request, server),
    userAgent: request.headers.get('user-agent'),
  })

  // Per request, from `transform` to `resolve`: the same Request object reaches both.
  const grants = new WeakMap<Request, Grant<W>>()
  /** The caller may act: the route's validation (422) comes next. */
  const admit = (request: Request, grant: Grant<W>) => {
    grants.set(request, grant)
  }
  const granted = (request: Request): Grant<W> => {
    const grant = grants.get(request)
    // `transform` either admitted this request or threw: no grant is a bug in the guard, not a 401.
    if (!grant) throw new Error('auth guard: resolve without a grant')
    return grant
  }

  /**
   * The hooks of a route on the path's workspace: `admits` reads what the principal holds there and
   * answers which tenants it reaches, or null for a 403 saying `refusal`: on the JSON API the scope
   * it lacks, to a person on the dashboard the role that `needed` takes. One set per route:
   * `introspect` hands it the route's own path schema, which its `transform` checks.
   */
  const onWorkspace = (
    admits: (held: readonly string[]) => TenantReach | null,
    refusal: string,
    needed: WorkspaceScope,
  ) => {
    const routePath = new RoutePath()
    async function transform({
      request,
      cookie,
      body,
      path,
      params,
      server,
      set,
    }: Credentials & { path: string; params: Record<string, string> } & Reply) {
      const principal = await authenticate({ request, cookie, body }, server)
      // DESIGN's order: who calls (above), then the path's parameters (422 on the JSON API), then
      // may they act here (404/403), then the body and query (Elysia's validation, next). A path
      // id that cannot name a resource is never looked up (PostgreSQL refuses a NUL in text). A
      // dashboard page answers 404 for it: a person followed a bad link.
      const api = path.startsWith('/v1/')
      const malformed = api ? routePath.problem(params) : null
      const id = params.workspace_id ?? ''
      const access = malformed || !isUuid(id) ? undefined : await findAccess(id, principal)
      // Counted on the workspace when it is the caller's, on the organisation either way.
      await count(request, server, set, principal, access?.workspace)
      if (malformed) throw malformed
      if (!access) throw notFound('Workspace')
      const tenants = admits(access.scopes)
      if (!tenants) throw forbidden(api ? refusal : roleRefusal(needed))
      admit(request, {
        principal,
        actor: actorOf(principal, request, server),
        workspace: access.workspace,
        scopes: access.scopes,
        tenants,
      })
    }
    return { transform, introspect: routePath.read }
  }
  const onWorkspaceGrant = (request: Request) => {
    const { principal, actor, workspace, scopes, tenants } = granted(request)
    return { principal, actor, workspace: workspace!, scopes: scopes!, tenants: tenants! }
  }

  /** `scope`'s hooks, made for each route that asks (Elysia calls the macro once per route). */
  const scopeHooks = (needed: WorkspaceScope) => {
    const hooks = onWorkspace(
      (held) => (holdsScope(held, needed) ? 'all' : null),
      `This action needs the ${needed} scope`,
      needed,
    )
    registerGuard(hooks.transform, needed)
    return {
      ...hooks,
      resolve({ request }: { request: Request }) {
        const { principal, actor, workspace, scopes } = onWorkspaceGrant(request)
        return { principal, actor, workspace, scopes }
      },
    }
  }

  /** `tenantScope`'s hooks: a workspace scope of that level, or a tenant scope of it. */
  const tenantHooks = (level: TenantLevel) => {
    const hooks = onWorkspace(
      (held) => tenantReach(held, level),
      `This action needs the workspace:${level} scope or a tenant:<slug>:${level} scope`,
      `workspace:${level}`,
    )
    registerGuard(hooks.transform, `workspace:${level}`, level)
    return {
      ...hooks,
      resolve: ({ request }: { request: Request }) => onWorkspaceGrant(request),
    }
  }

  async function signedIn({ request, cookie, body, server, set }: Credentials & Reply) {
    const principal = await authenticate({ request, cookie, body }, server)
    await count(request, server, set, principal)
    // The platform's own routes (your workspaces, creating one) are a person's: a key has one workspace.
    if (principal.kind !== 'user') throw forbidden('This action needs a signed-in person, not a machine key')
    admit(request, { principal, actor: actorOf(principal, request, server) })
  }
  registerGuard(signedIn, 'signed-in')

  async function anyCaller({ request, cookie, body, server, set }: Credentials & Reply) {
    const principal = await authenticate({ request, cookie, body }, server)
    await count(request, server, set, principal)
    admit(request, { principal, actor: actorOf(principal, request, server) })
  }
  registerGuard(anyCaller, 'any-caller')

  return new Elysia({ name: 'auth' }).decorate('principalOf', principalOf).macro({
    /** `auth: true`: a signed-in person (a machine key gets 403). */
    auth: {
      transform: signedIn,
      resolve: ({ request }) => {
        const { principal, actor } = granted(request)
        return { principal: principal as UserPrincipal, actor }
      },
    },
    /** `caller: true`: anyone with a credential, machine keys included (`GET /v1/auth/me`). */
    caller: {
      transform: anyCaller,
      resolve: ({ request }) => {
        const { principal, actor } = granted(request)
        return { principal, actor }
      },
    },
    /**
     * `scope: 'workspace:read'` (or write/admin): a principal holding that scope on the
     * `{workspace_id}` of the path. A workspace the caller cannot see answers 404, never 403,
     * so ids of other users' workspaces leak nothing.
     */
    scope: scopeHooks,
    /**
     * `tenantScope: 'read'` (or write): a route on one tenant of the path's workspace, or on its
     * list. A principal holding `workspace:<level>` reaches every tenant; one holding
     * `tenant:<slug>:<level>` (write covers read) reaches those slugs only, and the route gets
     * them as `tenants` (`'all'` or the slugs) to answer 404 for any other tenant.
     */
    tenantScope: tenantHooks,
  })
}

export type AuthPlugin<W extends WorkspaceRef> = ReturnType<typeof authPlugin<W>>
