import { type Cookie, Elysia, ParseError } from 'elysia'
import type { Account } from '../../identity'
import { forbidden, notFound, unauthorized } from '../errors'
import { isUuid } from '../formats'

/** Scopes nest: read ⊂ write ⊂ admin (SPEC "Machine-key scopes"). */
export type WorkspaceScope = 'workspace:read' | 'workspace:write' | 'workspace:admin'
const SCOPE_RANK: Record<WorkspaceScope, number> = {
  'workspace:read': 1,
  'workspace:write': 2,
  'workspace:admin': 3,
}

/** What the guard needs to know of a workspace to ask a principal about it. */
export interface WorkspaceRef {
  id: string
  ownerId: string
}

/** A dashboard session as routes see it: logout and CSRF need it. */
export interface PrincipalSession {
  idHash: string
  csrfToken: string
  idToken: () => string | null
}

/**
 * Who is calling and what they may do. `kind` grows as principals do (machine keys next); routes
 * never look at it, they ask for a scope and the principal answers per workspace.
 */
export interface Principal {
  kind: 'user'
  account: Account
  via: 'session' | 'bearer'
  /** Present for session callers. */
  session?: PrincipalSession
  /** The scope held on a workspace; null when the workspace is none of this principal's business. */
  scopeOn(workspace: WorkspaceRef): WorkspaceScope | null
}

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
  findWorkspace: (id: string) => Promise<W | undefined>
}

/** What the guard found in `transform`, handed to the route by `resolve` once validation passed. */
interface Grant<W> {
  principal: Principal
  /** Set for `scope` routes. */
  workspace?: W
}

/** What a guarded route asks of its caller: any principal, or a scope on the path's workspace. */
export type Guard = 'signed-in' | WorkspaceScope

// The guard's `transform` hooks, each with what it asks: how a route table shows which routes are guarded.
const guards = new WeakMap<object, Guard>()

/**
 * What a route asks through the guard, read from its hooks as `app.routes` lists them (each hook a
 * function or `{ fn }`); undefined for a route the guard does not cover.
 */
export function guardOf(hooks: { transform?: unknown }): Guard | undefined {
  const list: unknown[] = Array.isArray(hooks.transform) ? hooks.transform : [hooks.transform]
  for (const hook of list) {
    const fn = typeof hook === 'function' ? hook : (hook as { fn?: unknown } | undefined)?.fn
    const guard = typeof fn === 'function' ? guards.get(fn) : undefined
    if (guard) return guard
  }
  return undefined
}

/**
 * A JSON body that does not parse. Elysia answers one (422) while parsing, before any hook; the
 * guard's routes keep it instead and answer it once the caller is let through.
 */
const UNPARSABLE = Symbol('unparsable JSON body')

/** The guard's JSON parser: Elysia's (`request.json()`), except that a failure waits for the guard. */
async function parseJson({ request }: { request: Request }, contentType: string) {
  // Anything else goes on to Elysia's parsers: forms are always parsed, `_csrf` included.
  if (contentType !== 'application/json') return undefined
  const text = await request.text()
  try {
    return JSON.parse(text)
  } catch {
    return UNPARSABLE
  }
}

/**
 * The one auth guard, built once in app.ts and handed to every feature's routes. Routes say what
 * they need in one word: `auth: true` (any principal) or `scope: 'workspace:write'`.
 *
 * Who is calling comes before what they sent, on every route (as Stripe and GitHub answer): 401
 * (no or failed credentials), 403 (CSRF, a missing scope) and 404 (a workspace the caller cannot
 * see) come before any 422, whose details are for a caller who may act. Elysia runs parse →
 * transform → validation (params, query, body) → resolve → handler, so the guard decides in
 * `transform`, where the body is already parsed (a form's `_csrf` included), and `resolve` hands the
 * route what it found.
 */
export function authPlugin<W extends WorkspaceRef>({ resolvers, findWorkspace }: AuthOptions<W>) {
  async function principalOf(credentials: Credentials): Promise<Principal | null> {
    for (const resolve of resolvers) {
      const principal = await resolve(credentials)
      if (principal) return principal
    }
    return null
  }

  const authenticate = async ({ request, cookie, body }: Credentials) => {
    const principal = await principalOf({ request, cookie, body: body === UNPARSABLE ? undefined : body })
    if (!principal) throw unauthorized()
    return principal
  }

  // Per request, from `transform` to `resolve`: the same Request object reaches both.
  const grants = new WeakMap<Request, Grant<W>>()
  /** The caller may act: only now does a body that did not parse get its answer (422). */
  const admit = (request: Request, body: unknown, grant: Grant<W>) => {
    grants.set(request, grant)
    if (body === UNPARSABLE) throw new ParseError()
  }
  const granted = (request: Request): Grant<W> => {
    const grant = grants.get(request)
    // `transform` either admitted this request or threw: no grant is a bug in the guard, not a 401.
    if (!grant) throw new Error('auth guard: resolve without a grant')
    return grant
  }

  /** `scope`'s hooks, one set per scope rather than per route. */
  const scopeHooks = (needed: WorkspaceScope) => {
    async function transform({
      request,
      cookie,
      body,
      params,
    }: Credentials & { params: Record<string, string> }) {
      const principal = await authenticate({ request, cookie, body })
      // A path id that is not a uuid names no workspace: 404 like any other, before validation
      // could answer 422, and never looked up (PostgreSQL refuses a NUL in text).
      const id = params.workspace_id ?? ''
      const workspace = isUuid(id) ? await findWorkspace(id) : undefined
      const held = workspace ? principal.scopeOn(workspace) : null
      if (!workspace || !held) throw notFound('Workspace')
      if (SCOPE_RANK[held] < SCOPE_RANK[needed]) throw forbidden(`This needs ${needed}`)
      admit(request, body, { principal, workspace })
    }
    guards.set(transform, needed)
    return {
      parse: parseJson,
      transform,
      resolve({ request }: { request: Request }) {
        const { principal, workspace } = granted(request)
        return { principal, workspace: workspace! }
      },
    }
  }
  const scopes = {
    'workspace:read': scopeHooks('workspace:read'),
    'workspace:write': scopeHooks('workspace:write'),
    'workspace:admin': scopeHooks('workspace:admin'),
  }

  async function signedIn({ request, cookie, body }: Credentials) {
    admit(request, body, { principal: await authenticate({ request, cookie, body }) })
  }
  guards.set(signedIn, 'signed-in')

  return new Elysia({ name: 'auth' }).decorate('principalOf', principalOf).macro({
    /** `auth: true`: any signed-in principal. */
    auth: {
      parse: parseJson,
      transform: signedIn,
      resolve: ({ request }) => ({ principal: granted(request).principal }),
    },
    /**
     * `scope: 'workspace:read'` (or write/admin): a principal holding that scope on the
     * `{workspace_id}` of the path. A workspace the caller cannot see answers 404, never 403,
     * so ids of other users' workspaces leak nothing.
     */
    scope: (needed: WorkspaceScope) => scopes[needed],
  })
}

export type AuthPlugin<W extends WorkspaceRef> = ReturnType<typeof authPlugin<W>>
