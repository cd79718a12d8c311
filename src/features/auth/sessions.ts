import { eq } from 'drizzle-orm'
import type { Core } from '../../core'
import type { Conn } from '../../db/store'
import { type Account, PLATFORM } from '../../identity'
import { randomToken, sha256Hex } from '../../shared/crypto'
import { sessionCookieFor } from '../../shared/session-cookie'
import { sessions } from './schema'

export const SESSION_TTL_MS = 7 * 24 * 3600_000
/** How long a started login (its state, nonce and PKCE verifier) may be finished. */
export const LOGIN_REQUEST_TTL_MS = 10 * 60_000

/** The session cookie's name on this server (`__Host-` over https). */
export const sessionCookieName = (core: Core) => sessionCookieFor(core.config.baseUrl)

export interface SessionView {
  idHash: string
  csrfToken: string
  idToken: () => string | null
  account: Account
}

/** A dashboard session: the cookie carries a random id; the table holds only its hash. */
export async function createSession(
  core: Core,
  accountId: string,
  idToken: string | null,
): Promise<{ cookie: string; csrfToken: string }> {
  const id = randomToken(32)
  const now = core.clock.now()
  const csrfToken = randomToken(24)
  await core.db.insert(sessions).values({
    idHash: sha256Hex(id),
    accountId,
    csrfToken,
    idTokenSealed: idToken ? core.secrets.seal(idToken, 'session-id-token') : null,
    createdAt: now,
    expiresAt: now + SESSION_TTL_MS,
    lastSeenAt: now,
  })
  return { cookie: id, csrfToken }
}

interface SessionRow {
  csrfToken: string
  idTokenSealed: string | null
  expiresAt: number
  id: string
  instanceId: string
  email: string
  emailVerified: unknown
  name: string
  passwordHash: string | null
  isPlatformAdmin: unknown
  authEpoch: number
  createdAt: number
  updatedAt: number
}

// One round trip for the session and its account: this runs on every dashboard request.
const BY_HASH = `
  SELECT s.csrf_token AS "csrfToken", s.id_token_sealed AS "idTokenSealed", s.expires_at AS "expiresAt",
    a.id, a.instance_id AS "instanceId", a.email, a.email_verified AS "emailVerified", a.name,
    a.password_hash AS "passwordHash", a.is_platform_admin AS "isPlatformAdmin", a.auth_epoch AS "authEpoch",
    a.created_at AS "createdAt", a.updated_at AS "updatedAt"
  FROM sessions s
  JOIN accounts a ON a.id = s.account_id AND a.instance_id = $2
  WHERE s.id_hash = $1`

export async function findSession(core: Core, cookie: string | undefined): Promise<SessionView | null> {
  if (!cookie) return null
  const idHash = sha256Hex(cookie)
  const [row] = await core.store.query<SessionRow>(BY_HASH, [idHash, PLATFORM])
  if (!row) return null
  if (row.expiresAt <= core.clock.now()) {
    await destroySession(core, idHash)
    return null
  }
  const sealed = row.idTokenSealed
  return {
    idHash,
    csrfToken: row.csrfToken,
    // Opened only when needed (logout), not on every request.
    idToken: () => (sealed ? core.secrets.open(sealed, 'session-id-token') : null),
    account: {
      id: row.id,
      instanceId: row.instanceId,
      email: row.email,
      // Read raw: PostgreSQL answers booleans, SQLite 1/0.
      emailVerified: Boolean(row.emailVerified),
      name: row.name,
      passwordHash: row.passwordHash,
      isPlatformAdmin: Boolean(row.isPlatformAdmin),
      authEpoch: row.authEpoch,
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
    },
  }
}

export async function destroySession(core: Pick<Core, 'db'>, idHash: string): Promise<void> {
  await core.db.delete(sessions).where(eq(sessions.idHash, idHash))
}

/** Signs an account out of the dashboard everywhere, in the transaction that changed its password. */
export async function endAccountSessions(conn: Conn, accountId: string): Promise<void> {
  await conn.db.delete(sessions).where(eq(sessions.accountId, accountId))
}
