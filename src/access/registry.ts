// The route scope registry: which routes the guard covers and what each asks, read back from a
// route's hooks (the route table of tests, the OpenAPI document's security, `securityOf`).
import type { TenantLevel, WorkspaceScope } from './scopes'

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

/**
 * Files a guard hook with what it asks (and, on a `tenantScope` route, its tenant level): the
 * guard calls it for each hook it makes.
 */
export function registerGuard(transform: object, guard: Guard, tenantLevel?: TenantLevel) {
  guards.set(transform, guard)
  if (tenantLevel) tenantLevels.set(transform, tenantLevel)
}

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

/** An OpenAPI security requirement: scheme name → the scopes (role names) it must carry. */
export type SecurityRequirement = Record<string, string[]>

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * The security of one operation, from what the auth guard asks of it (`guardOf`): a workspace scope
 * on the bearer token (a tenant scope too where the route takes one), or the session, whose writes
 * carry the CSRF header. A route the guard does not cover needs nothing. Dashboard pages take the
 * session only: a machine token is refused there, and their forms carry the token as `_csrf`.
 */
export function securityOf(
  guard: Guard | undefined,
  tenant: TenantLevel | undefined,
  method: string,
  path: string,
): SecurityRequirement[] {
  if (!guard) return []
  const session: SecurityRequirement = SAFE_METHODS.has(method) ? { session: [] } : { session: [], csrf: [] }
  if (!path.startsWith('/v1/')) return [session]
  if (guard === 'signed-in' || guard === 'any-caller') return [{ bearer: [] }, session]
  const tenantKey = tenant ? [{ bearer: [`tenant:{slug}:${tenant}`] }] : []
  return [{ bearer: [guard] }, ...tenantKey, session]
}
