import { type Cookie, Elysia } from 'elysia'
import type { Account } from '../../identity'
import { forbidden, notFound, unauthorized } from '../errors'

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

/**
 * The one auth guard, built once in app.ts and handed to every feature's routes. Routes say what
 * they need in one word: `auth: true` (any principal) or `scope: 'workspace:write'`.
 */
export function authPlugin<W extends WorkspaceRef>({ resolvers, findWorkspace }: AuthOptions<W>) {
  async function principalOf(credentials: Credentials): Promise<Principal | null> {
    for (const resolve of resolvers) {
      const principal = await resolve(credentials)
      if (principal) return principal
    }
    return null
  }

  const required = async (credentials: Credentials) => {
    const principal = await principalOf(credentials)
    if (!principal) throw unauthorized()
    return principal
  }

  return new Elysia({ name: 'auth' }).decorate('principalOf', principalOf).macro({
    /** `auth: true`: any signed-in principal. */
    auth: {
      async resolve({ request, cookie, body }) {
        return { principal: await required({ request, cookie, body }) }
      },
    },
    /**
     * `scope: 'workspace:read'` (or write/admin): a principal holding that scope on the
     * `{workspace_id}` of the path. A workspace the caller cannot see answers 404, never 403,
     * so ids of other users' workspaces leak nothing.
     */
    scope: (needed: WorkspaceScope) => ({
      resolve: async ({ request, cookie, body, params }) => {
        const principal = await required({ request, cookie, body })
        const workspace = await findWorkspace(
          (params as Record<string, string | undefined>).workspace_id ?? '',
        )
        const held = workspace ? principal.scopeOn(workspace) : null
        if (!workspace || !held) throw notFound('Workspace')
        if (SCOPE_RANK[held] < SCOPE_RANK[needed]) throw forbidden(`This needs ${needed}`)
        return { principal, workspace }
      },
    }),
  })
}

export type AuthPlugin<W extends WorkspaceRef> = ReturnType<typeof authPlugin<W>>
