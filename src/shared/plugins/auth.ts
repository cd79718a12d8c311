import { and, eq, sql } from 'drizzle-orm'
import { Elysia } from 'elysia'
import type { Core } from '../../core'
import { workspaces } from '../../db/schema'
import { findSession, type SessionView, sessionCookieName } from '../../features/auth/sessions'
import { type Account, createPlatformTokenVerifier } from '../../identity'
import { safeEqual } from '../crypto'
import { AppError, forbidden, notFound, unauthorized } from '../errors'

/** Scopes nest: read ⊂ write ⊂ admin (SPEC "Machine-key scopes"). */
export type WorkspaceScope = 'workspace:read' | 'workspace:write' | 'workspace:admin'
const SCOPE_RANK: Record<WorkspaceScope, number> = {
  'workspace:read': 1,
  'workspace:write': 2,
  'workspace:admin': 3,
}

export type WorkspaceRow = typeof workspaces.$inferSelect

/** Who is calling: a dashboard user (session cookie) or an API caller (bearer token). */
export interface Principal {
  account: Account
  via: 'session' | 'bearer'
  /** Present for session callers: logout and CSRF need it. */
  session?: SessionView
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/**
 * The one auth guard. Routes declare `auth: true`; the principal comes from
 * `Authorization: Bearer <platform JWT>` (verified locally against the platform JWKS) or from the
 * session cookie, in which case every unsafe method must carry the session's CSRF token
 * (`X-CSRF-Token` header or `_csrf` form field) and, when sent, a same-origin `Origin`.
 */
export function authPlugin(core: Core) {
  const origin = new URL(core.config.baseUrl).origin
  const verifyPlatformToken = createPlatformTokenVerifier(core)

  async function fromBearer(token: string): Promise<Principal> {
    const account = await verifyPlatformToken(token)
    if (!account) {
      throw new AppError('INVALID_TOKEN', 401, 'Invalid or expired access token', {
        'WWW-Authenticate': `Bearer realm="gatehouse", error="invalid_token"`,
      })
    }
    return { account, via: 'bearer' }
  }

  function checkCsrf(request: Request, session: SessionView, body: unknown) {
    const sentOrigin = request.headers.get('origin')
    if (sentOrigin && sentOrigin !== origin) throw forbidden('Cross-origin request refused')
    const field = body && typeof body === 'object' ? (body as Record<string, unknown>)._csrf : undefined
    const token = request.headers.get('x-csrf-token') ?? (typeof field === 'string' ? field : '')
    if (!token || !safeEqual(token, session.csrfToken)) throw forbidden('Missing or invalid CSRF token')
  }

  async function principalOf(
    request: Request,
    cookieValue: string | undefined,
    body: unknown,
  ): Promise<Principal | null> {
    const header = request.headers.get('authorization')
    if (header) {
      const [scheme, token] = header.split(' ')
      if (scheme?.toLowerCase() !== 'bearer' || !token)
        throw unauthorized('Use Authorization: Bearer <token>')
      return fromBearer(token)
    }
    const session = findSession(core, cookieValue)
    if (!session) return null
    if (UNSAFE.has(request.method)) checkCsrf(request, session, body)
    return { account: session.account, via: 'session', session }
  }

  const ownedWorkspace = core.db
    .select()
    .from(workspaces)
    .where(and(eq(workspaces.id, sql.placeholder('id')), eq(workspaces.ownerId, sql.placeholder('ownerId'))))
    .prepare()

  /** The scope a principal holds on a workspace it can see; the owner holds workspace:admin. */
  function scopeOn(principal: Principal, workspace: WorkspaceRow): WorkspaceScope | null {
    return workspace.ownerId === principal.account.id ? 'workspace:admin' : null
  }

  const cookieName = sessionCookieName(core)
  const required = async (request: Request, cookieValue: unknown, body: unknown) => {
    const principal = await principalOf(request, cookieValue as string | undefined, body)
    if (!principal) throw unauthorized()
    return principal
  }

  return new Elysia({ name: 'auth' }).decorate('principalOf', principalOf).macro({
    /** `auth: true`: any signed-in principal. */
    auth: {
      async resolve({ request, cookie, body }) {
        return { principal: await required(request, cookie[cookieName]?.value, body) }
      },
    },
    /**
     * `scope: 'workspace:read'` (or write/admin): a principal holding that scope on the
     * `{workspace_id}` of the path. A workspace the caller cannot see answers 404, never 403,
     * so ids of other users' workspaces leak nothing.
     */
    scope: (needed: WorkspaceScope) => ({
      resolve: async ({ request, cookie, body, params }) => {
        const principal = await required(request, cookie[cookieName]?.value, body)
        const workspace = ownedWorkspace.get({
          id: (params as Record<string, string | undefined>).workspace_id ?? '',
          ownerId: principal.account.id,
        })
        const held = workspace ? scopeOn(principal, workspace) : null
        if (!workspace || !held) throw notFound('Workspace')
        if (SCOPE_RANK[held] < SCOPE_RANK[needed]) throw forbidden(`This needs ${needed}`)
        return { principal, workspace }
      },
    }),
  })
}
