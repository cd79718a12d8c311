import type { TObject } from '@sinclair/typebox'
import { type Guard, guardOf, tenantLevelOf } from '../../src/access/registry'
import type { TenantLevel } from '../../src/access/scopes'
import type { App } from '../../src/app'

/** A route of the app's own table, as the auth guard sees it. */
export interface TableRoute {
  method: string
  /** As the table has it: `/v1/workspaces/:workspace_id/apps/`. */
  path: string
  /** What the guard asks: `signed-in`, `any-caller` or a workspace scope; undefined when unguarded. */
  needs?: Guard
  /** Set where tenant scopes are accepted (`tenantScope`): the level a tenant scope must grant. */
  tenant?: TenantLevel
  body?: TObject
  query?: TObject
}

export type GuardedRoute = TableRoute & { needs: Guard }

/** Every route of the app (its method, path, what the guard asks and its schemas). */
export function routeTable(app: App): TableRoute[] {
  return app.routes.map((r) => {
    const hooks = r.hooks as { transform?: unknown; body?: TObject; query?: TObject }
    return {
      method: r.method,
      path: r.path,
      needs: guardOf(hooks),
      tenant: tenantLevelOf(hooks),
      body: hooks.body,
      query: hooks.query,
    }
  })
}

/** The routes behind the auth guard. */
export const guardedRoutes = (app: App): GuardedRoute[] =>
  routeTable(app).filter((r): r is GuardedRoute => r.needs !== undefined)

export const routeKey = (r: TableRoute) => `${r.method} ${r.path}`

/**
 * The route's path with the workspace id given and made-up ids elsewhere (`ids` by parameter name).
 * A parameter starts a segment: a colon inside one is literal (`/tenants:batch`).
 */
export const pathOf = (r: TableRoute, workspace: string, ids: Record<string, string> = {}) =>
  r.path.replace(/\/:(\w+)/g, (_, name: string) =>
    name === 'workspace_id' ? `/${workspace}` : `/${ids[name] ?? `${name}_1`}`,
  )
