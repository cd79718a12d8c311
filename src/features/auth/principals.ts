import type { PrincipalResolver } from '../../access/guard'
import type { KeyPrincipal, PrincipalSession, UserPrincipal } from '../../access/model'
import type { Core } from '../../core'
import type { Account, PlatformCaller } from '../../identity'
import { safeEqual } from '../../shared/crypto'
import { appError, forbidden, unauthorized } from '../../shared/errors'
import { AuthErrors } from './errors'
import { findSession, type SessionView, sessionCookieName } from './sessions'

/** Verifies a platform access token: its account or machine key, or null when the token is not valid. */
type PlatformTokenVerifier = (token: string) => Promise<PlatformCaller | null>

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

const userPrincipal = (
  account: Account,
  via: UserPrincipal['via'],
  session?: PrincipalSession,
): UserPrincipal => ({
  kind: 'user',
  id: `user:${account.id}`,
  account,
  via,
  session,
})

/**
 * `Authorization: Bearer <platform access token>`: a person's (the CLI, API callers) or a machine
 * key's (from the jwt-bearer exchange). Any Authorization header is this resolver's to judge: a
 * malformed one is a 401, not a fall-through to the session cookie.
 */
export function platformTokenResolver(verify: PlatformTokenVerifier): PrincipalResolver {
  return async ({ request }) => {
    const header = request.headers.get('authorization')
    if (!header) return null
    const [scheme, token] = header.split(' ')
    if (scheme?.toLowerCase() !== 'bearer' || !token) throw unauthorized('Use Authorization: Bearer <token>')
    const caller = await verify(token)
    if (!caller) {
      throw appError(AuthErrors.INVALID_TOKEN, 401, {
        headers: { 'WWW-Authenticate': `Bearer realm="gatehouse", error="invalid_token"` },
      })
    }
    if ('account' in caller) return userPrincipal(caller.account, 'bearer')
    const { keyId, workspaceId, scopes } = caller.machine
    return {
      kind: 'key',
      id: `key:${keyId}`,
      key: { id: keyId, workspaceId, scopes },
      via: 'bearer',
    } satisfies KeyPrincipal
  }
}

/**
 * The dashboard session cookie. Every unsafe method must carry the session's CSRF token
 * (`X-CSRF-Token` header or `_csrf` form field) and, when sent, a same-origin `Origin`.
 */
export function sessionResolver(core: Core): PrincipalResolver {
  const cookieName = sessionCookieName(core)
  const origin = new URL(core.config.baseUrl).origin

  function checkCsrf(request: Request, session: SessionView, body: unknown) {
    const sentOrigin = request.headers.get('origin')
    if (sentOrigin && sentOrigin !== origin) throw forbidden('Cross-origin request refused')
    const field = body && typeof body === 'object' ? (body as Record<string, unknown>)._csrf : undefined
    const token = request.headers.get('x-csrf-token') ?? (typeof field === 'string' ? field : '')
    if (!token || !safeEqual(token, session.csrfToken)) throw forbidden('Missing or invalid CSRF token')
  }

  return async ({ request, cookie, body }) => {
    const session = await findSession(core, cookie[cookieName]?.value as string | undefined)
    if (!session) return null
    if (UNSAFE.has(request.method)) checkCsrf(request, session, body)
    return userPrincipal(session.account, 'session', session)
  }
}
