import { and, eq, sql } from 'drizzle-orm'
import type { Core } from '../../core'
import { preparedFor } from '../../db/prepared'
import { type Account, accounts, PLATFORM, type Tx } from '../../identity'
import { randomToken, sha256Hex } from '../../shared/crypto'
import { sessions } from './schema'

export const SESSION_TTL_MS = 7 * 24 * 3600_000
/** How long a started login (its state, nonce and PKCE verifier) may be finished. */
export const LOGIN_REQUEST_TTL_MS = 10 * 60_000

/** `__Host-` binds the cookie to this origin (Secure, Path=/, no Domain) when served over https. */
export const sessionCookieName = (core: Core) =>
  core.config.baseUrl.startsWith('https:') ? '__Host-gh_session' : 'gh_session'

export interface SessionView {
  idHash: string
  csrfToken: string
  idToken: () => string | null
  account: Account
}

/** A dashboard session: the cookie carries a random id; the table holds only its hash. */
export function createSession(
  core: Core,
  accountId: string,
  idToken: string | null,
): { cookie: string; csrfToken: string } {
  const id = randomToken(32)
  const now = core.clock.now()
  const csrfToken = randomToken(24)
  core.db
    .insert(sessions)
    .values({
      idHash: sha256Hex(id),
      accountId,
      csrfToken,
      idTokenSealed: idToken ? core.secrets.seal(idToken, 'session-id-token') : null,
      createdAt: now,
      expiresAt: now + SESSION_TTL_MS,
      lastSeenAt: now,
    })
    .run()
  return { cookie: id, csrfToken }
}

const queries = preparedFor((db) => ({
  // One round trip for the session and its account: this runs on every dashboard request.
  byHash: db
    .select({ session: sessions, account: accounts })
    .from(sessions)
    .innerJoin(accounts, and(eq(accounts.id, sessions.accountId), eq(accounts.instanceId, PLATFORM)))
    .where(eq(sessions.idHash, sql.placeholder('idHash')))
    .prepare(),
}))

export function findSession(core: Core, cookie: string | undefined): SessionView | null {
  if (!cookie) return null
  const idHash = sha256Hex(cookie)
  const row = queries(core.db).byHash.get({ idHash })
  if (!row) return null
  if (row.session.expiresAt <= core.clock.now()) {
    destroySession(core, idHash)
    return null
  }
  const sealed = row.session.idTokenSealed
  return {
    idHash,
    csrfToken: row.session.csrfToken,
    // Opened only when needed (logout), not on every request.
    idToken: () => (sealed ? core.secrets.open(sealed, 'session-id-token') : null),
    account: row.account,
  }
}

export function destroySession(core: Core, idHash: string): void {
  core.db.delete(sessions).where(eq(sessions.idHash, idHash)).run()
}

/** Signs an account out of the dashboard everywhere, in the transaction that changed its password. */
export function endAccountSessions(tx: Tx, accountId: string): void {
  tx.delete(sessions).where(eq(sessions.accountId, accountId)).run()
}
