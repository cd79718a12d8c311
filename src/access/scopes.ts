// The scope rules (SPEC "Machine-key scopes", DESIGN "Tenants"): what a held scope grants. Plain
// functions of strings, for the guard, the services that check a key's scopes and the MCP tools.

/** Scopes nest: read ⊂ write ⊂ admin (SPEC "Machine-key scopes"). */
export type WorkspaceScope = 'workspace:read' | 'workspace:write' | 'workspace:admin'
/** What a principal may hold on a workspace: workspace scopes, and (machine keys) tenant scopes. */
export type Scope = WorkspaceScope | `tenant:${string}:read` | `tenant:${string}:write`
const SCOPE_RANK: Record<WorkspaceScope, number> = {
  'workspace:read': 1,
  'workspace:write': 2,
  'workspace:admin': 3,
}

/** Who holds a scope, in the words of a workspace's roles (DESIGN "Who may do what"). */
const HOLDERS: Record<WorkspaceScope, string> = {
  'workspace:read': 'a member',
  'workspace:write': 'a developer, admin or owner',
  'workspace:admin': 'an admin or owner',
}

/** A person's 403 on the dashboard: which role may act, where the API's names the scope for programs. */
export const roleRefusal = (needed: WorkspaceScope) =>
  `Only ${HOLDERS[needed]} of this workspace can do this.`

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
