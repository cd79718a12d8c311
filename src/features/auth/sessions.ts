import { eq } from 'drizzle-orm'
import type { Core } from '../../core'
import { sessions } from '../../db/schema'
import { type Account, findAccount } from '../../identity/accounts'
import { PLATFORM } from '../../identity/instances'
import { randomToken, sha256Hex } from '../../shared/crypto'

export const SESSION_TTL_MS = 7 * 24 * 3600_000

/** `__Host-` binds the cookie to this origin (Secure, Path=/, no Domain) when served over https. */
export const sessionCookieName = (core: Core) =>
  core.config.baseUrl.startsWith('https:') ? '__Host-gh_session' : 'gh_session'

export interface SessionView {
  idHash: string
  csrfToken: string
  idToken: string | null
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

export function findSession(core: Core, cookie: string | undefined): SessionView | null {
  if (!cookie) return null
  const idHash = sha256Hex(cookie)
  const row = core.db.select().from(sessions).where(eq(sessions.idHash, idHash)).get()
  if (!row) return null
  if (row.expiresAt <= core.clock.now()) {
    destroySession(core, idHash)
    return null
  }
  const account = findAccount(core, PLATFORM, row.accountId)
  if (!account) return null
  return {
    idHash,
    csrfToken: row.csrfToken,
    idToken: row.idTokenSealed ? core.secrets.open(row.idTokenSealed, 'session-id-token') : null,
    account,
  }
}

export function destroySession(core: Core, idHash: string): void {
  core.db.delete(sessions).where(eq(sessions.idHash, idHash)).run()
}
