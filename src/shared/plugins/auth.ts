import type { TSchema } from '@sinclair/typebox'
import { type TypeCheck, TypeCompiler } from '@sinclair/typebox/compiler'
import type { Server } from 'bun'
import { type Cookie, Elysia, t, ValidationError } from 'elysia'
import type { Account } from '../../identity'
import { AppError, forbidden, notFound, unauthorized } from '../errors'
import { isUuid } from '../formats'

/** Scopes nest: read ⊂ write ⊂ admin (SPEC "Machine-key scopes"). */
export type WorkspaceScope = 'workspace:read' | 'workspace:write' | 'workspace:admin'
/** What a principal may hold on a workspace: workspace scopes, and (machine keys) tenant scopes. */
export type Scope = WorkspaceScope | `tenant:${string}:read` | `tenant:${string}:write`
const SCOPE_RANK: Record<WorkspaceScope, number> = {
  'workspace:read': 1,
  'workspace:write': 2,
  'workspace:admin': 3,
}

/** Whether `held` grants `needed` (admin ⊃ write ⊃ read). */
export function holdsScope(held: readonly string[], needed: WorkspaceScope): boolean {
  return held.some(
    (s) => Object.hasOwn(SCOPE_RANK, s) && SCOPE_RANK[s as WorkspaceScope] >= SCOPE_RANK[needed],
  )
}

/**
 * Whether `held` grants `wanted`, a workspace or tenant scope: a workspace scope covers every
 * tenant of the workspace at the same level (write covers `tenant:<slug>:write`), and a tenant's
 * write covers its read. What a machine key may be given, and what its token may ask for.
 */
export function grantsScope(held: readonly string[], wanted: string): boolean {
  if (Object.hasOwn(SCOPE_RANK, wanted)) return holdsScope(held, wanted as WorkspaceScope)
  const tenant = TENANT_SCOPE.exec(wanted)
  if (!tenant) return false
  const [, slug, level] = tenant
  if (holdsScope(held, `workspace:${level}` as WorkspaceScope)) return true
  return held.includes(wanted) || (level === 'read' && held.includes(`tenant:${slug}:write`))
}

const TENANT_SCOPE = /^tenant:([^:]+):(read|write)$/

/** What a tenant route asks: `read` (a tenant and its members) or `write` (changing them too). */
export type TenantLevel = 'read' | 'write'

/** The tenants a caller may reach on a tenant route: every one, or those of these slugs. */
export type TenantReach = 'all' | readonly string[]

/**
 * Which tenants `held` reaches at `level` (DESIGN "Tenants"): all of them with `workspace:<level>`
 * or more, else the slugs of its tenant scopes that grant `level` (a tenant's write covers its
 * read); null when none.
 */
export function tenantReach(held: readonly string[], level: TenantLevel): TenantReach | null {
  if (holdsScope(held, `workspace:${level}`)) return 'all'
  const slugs = new Set<string>()
  for (const scope of held) {
    const slug = TENANT_SCOPE.exec(scope)?.[1]
    if (slug && grantsScope(held, `tenant:${slug}:${level}`)) slugs.add(slug)
  }
  return slugs.size ? [...slugs] : null
}

/** Whether a tenant of `slug` is within `reach`. */
export const reaches = (reach: TenantReach, slug: string) => reach === 'all' || reach.includes(slug)

/** A path without a schema of its own still names its workspace by a uuid. */
const WORKSPACE_PATH = t.Object({ workspace_id: t.String({ format: 'uuid' }) })

/**
 * A route's path parameters as its own schema declares them (read at registration through the
 * macro's `introspect`), checked by the guard before it looks the workspace up: what Elysia's
 * validation would answer about them, only sooner.
 */
class RoutePath {
  private schema: TSchema = WORKSPACE_PATH
  private compiled?: TypeCheck<TSchema>

  /** The route's hooks as Elysia registers it. */
  read = (hooks: { params?: TSchema }) => {
    if (hooks.params) this.schema = hooks.params
  }

  /** The 422 that `params` deserve, or null when they are well formed. */
  problem(params: Record<string, string>): ValidationError | null {
    this.compiled ??= TypeCompiler.Compile(this.schema)
    return this.compiled.Check(params) ? null : new ValidationError('params', this.compiled, params)
  }
}

/** What the guard needs to know of a workspace. */
export interface WorkspaceRef {
  id: string
}

/** A dashboard session as routes see it: logout and CSRF need it. */
export interface PrincipalSession {
  idHash: string
  csrfToken: string
  idToken: () => string | null
}

/** A person: a platform account, by dashboard session or platform access token. */
export interface UserPrincipal {
  kind: 'user'
  /** `user:<account id>`: who the audit log names. */
  id: string
  account: Account
  via: 'session' | 'bearer'
  /** Present for session callers. */
  session?: PrincipalSession
}

/** A machine key, by an access token from the jwt-bearer exchange: one workspace, fixed scopes. */
export interface KeyPrincipal {
  kind: 'key'
  /** `key:<key id>`: who the audit log names. */
  id: string
  key: { id: string; workspaceId: string; scopes: string[] }
  via: 'bearer'
  session?: undefined
}

/**
 * Who is calling. Routes ask for a scope on the path's workspace; what the principal holds there is
 * read once per request by the guard (`findAccess`), so a role change acts on the next request.
 */
export type Principal = UserPrincipal | KeyPrincipal

/** Who did it and from where, as the audit log records it: what the guard hands every route. */
export interface Actor {
  /** `user:<account id>` or `key:<key id>`. */
  id: string
  ip: string | null
  userAgent: string | null
}

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

export interface AuthOptions<W extends WorkspaceRef> {
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
  limit?: (call: LimitedCall<W>) => Record<string, string> | Promise<Record<string, string>>
}

/** What the rate limits of a call are decided on. */
export interface LimitedCall<W> {
  request: Request
  principal: Principal | null
  workspace?: W
  ip: string | null
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
 * What a guarded route asks of its caller: a signed-in person, any caller (machine keys too), or a
 * scope on the path's workspace.
 */
export type Guard = 'signed-in' | 'any-caller' | WorkspaceScope

// The guard's `transform` hooks, each with what it asks: how a route table shows which routes are
// guarded. A `tenantScope` route is listed with the workspace scope a member needs there (a role
// holds no tenant scope), and its level in `tenantLevels`.
const guards = new WeakMap<object, Guard>()
const tenantLevels = new WeakMap<object, TenantLevel>()

/** The first of a route's `transform` hooks (each a function or `{ fn }`) that `map` knows. */
function lookUp<T>(map: WeakMap<object, T>, hooks: { transform?: unknown }): T | undefined {
  const list: unknown[] = Array.isArray(hooks.transform) ? hooks.transform : [hooks.transform]
  for (const hook of list) {
    const fn = typeof hook === 'function' ? hook : (hook as { fn?: unknown } | undefined)?.fn
    const found = typeof fn === 'function' ? map.get(fn) : undefined
    if (found) return found
  }
  return undefined
}

/**
 * What a route asks through the guard, read from its hooks as `app.routes` lists them; undefined
 * for a route the guard does not cover.
 */
export const guardOf = (hooks: { transform?: unknown }): Guard | undefined => lookUp(guards, hooks)

/** The tenant level of a `tenantScope` route (where tenant scopes are accepted); undefined elsewhere. */
export const tenantLevelOf = (hooks: { transform?: unknown }): TenantLevel | undefined =>
  lookUp(tenantLevels, hooks)

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
   * answers which tenants it reaches, or null for a 403 saying `refusal`. One set per route:
   * `introspect` hands it the route's own path schema, which its `transform` checks.
   */
  const onWorkspace = (admits: (held: readonly string[]) => TenantReach | null, refusal: string) => {
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
      const malformed = path.startsWith('/v1/') ? routePath.problem(params) : null
      const id = params.workspace_id ?? ''
      const access = malformed || !isUuid(id) ? undefined : await findAccess(id, principal)
      // Counted on the workspace when it is the caller's, on the organisation either way.
      await count(request, server, set, principal, access?.workspace)
      if (malformed) throw malformed
      if (!access) throw notFound('Workspace')
      const tenants = admits(access.scopes)
      if (!tenants) throw forbidden(refusal)
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
    )
    guards.set(hooks.transform, needed)
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
    )
    guards.set(hooks.transform, `workspace:${level}`)
    tenantLevels.set(hooks.transform, level)
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
  guards.set(signedIn, 'signed-in')

  async function anyCaller({ request, cookie, body, server, set }: Credentials & Reply) {
    const principal = await authenticate({ request, cookie, body }, server)
    await count(request, server, set, principal)
    admit(request, { principal, actor: actorOf(principal, request, server) })
  }
  guards.set(anyCaller, 'any-caller')

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
