import type { Core } from '../../core'
import { randomToken, sha256Hex } from '../../shared/crypto'

/**
 * Login CSRF defence (RFC 6749 §10.12): a login transaction is bound to the browser that started
 * it. `/v1/auth/login` gives that browser a random secret in an HttpOnly cookie, and the
 * `login_requests` row is keyed (column `state`) by a hash of secret and `state`: a callback URL
 * carried to another browser finds no row, so it cannot sign that browser into someone else's
 * account, nor use up the transaction. The row stays server-side for single use, nonce and PKCE
 * verifier.
 *
 * One cookie holds the secrets of the newest few logins of this browser (several tabs each finish
 * on their own); starting one more retires the oldest.
 */
const MAX_PENDING_LOGINS = 5
export const LOGIN_COOKIE_PATH = '/'

const SECRET = /^[A-Za-z0-9_-]{43}$/

/**
 * `__Host-` on https (so Path=/): a sibling subdomain cannot plant its own login secret with a
 * Domain attribute, which a path-scoped `__Secure-` cookie would allow (login CSRF again).
 */
export const loginCookieName = (core: Core) =>
  core.config.baseUrl.startsWith('https:') ? '__Host-gh_login' : 'gh_login'

/** The well-formed secrets of a login cookie value, oldest first; anything else is ignored. */
export function parseLoginCookie(value: unknown): string[] {
  if (typeof value !== 'string') return []
  return value
    .split('.')
    .filter((s) => SECRET.test(s))
    .slice(-MAX_PENDING_LOGINS)
}

export const serializeLoginCookie = (secrets: string[]) => secrets.join('.')

/** A new secret for this browser's cookie, keeping the newest others (oldest retired). */
export function addPendingLogin(pending: string[]): { secret: string; pending: string[] } {
  const secret = randomToken(32)
  return { secret, pending: [...pending.slice(-(MAX_PENDING_LOGINS - 1)), secret] }
}

/** The `login_requests` key of a transaction: neither the state alone nor the secret alone finds it. */
export const loginRequestKey = (secret: string, state: string) => sha256Hex(`${secret}.${state}`)
