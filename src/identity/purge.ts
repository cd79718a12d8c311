import type { Core } from '../core'
import { deleteInBatches } from '../db/batch-delete'
import { userEventData } from './accounts'
import { PLATFORM } from './instances'

/**
 * How long an unlocked throttle counter is kept after its window opened: longer than any sign-in
 * or reset window, so a purge never forgets failures that still count.
 */
const THROTTLE_KEEP_MS = 24 * 3600_000
/** An enrolment left half-way is forgotten after a day (a new one starts with a new secret). */
const UNCONFIRMED_TOTP_KEEP_MS = 24 * 3600_000

/**
 * Removes identity rows that can no longer be used: expired oidc-provider models (device codes,
 * sessions, grants, codes, tokens, interactions; a consumed code or rotated refresh token stays
 * until it expires, so its reuse is still recognised), mailed tokens used or expired, WebAuthn
 * challenges expired, authenticator apps never confirmed, and throttle counters that are neither locked nor inside a window.
 */
export async function purgeExpiredIdentityRows(core: Core): Promise<Record<string, number>> {
  const now = core.clock.now()
  return {
    sessions_ended: await endExpiredSessions(core, now),
    oidc_payloads: await deleteInBatches(core.store, 'oidc_payloads', 'expires_at <= $1', [now]),
    account_tokens: await deleteInBatches(
      core.store,
      'account_tokens',
      'used_at IS NOT NULL OR expires_at <= $1',
      [now],
    ),
    webauthn_challenges: await deleteInBatches(core.store, 'webauthn_challenges', 'expires_at <= $1', [now]),
    // An authenticator app set up but never confirmed: its secret was shown and not used.
    account_totp: await deleteInBatches(
      core.store,
      'account_totp',
      'confirmed_at IS NULL AND created_at <= $1',
      [now - UNCONFIRMED_TOTP_KEEP_MS],
    ),
    login_throttle: await deleteInBatches(
      core.store,
      'login_throttle',
      '(locked_until IS NULL OR locked_until <= $1) AND window_start <= $2',
      [now, now - THROTTLE_KEEP_MS],
    ),
  }
}

const BATCH = 500

// Signed-in sessions of workspace instances that expired, a batch at a time, deleted with the
// account they stood for (row values `(a, b) IN (SELECT …)` work on SQLite and PostgreSQL).
const EXPIRED_SESSIONS = `
  DELETE FROM oidc_payloads
  WHERE model = 'Session' AND (instance_id, id) IN (
    SELECT instance_id, id FROM oidc_payloads
    WHERE model = 'Session' AND expires_at <= $1 AND instance_id <> $2 AND account_id IS NOT NULL
    LIMIT ${BATCH})
  RETURNING instance_id AS "instanceId", account_id AS "accountId"`
const ACCOUNT = `SELECT id, name, email, via_idp AS "viaIdp" FROM accounts WHERE instance_id = $1 AND id = $2`

interface AccountRow {
  id: string
  name: string
  email: string
  viaIdp: string | null
}

/**
 * The expiry half of `session.ended` (SPEC "Events"; a logout is the other, logout.tsx): each
 * expired session of a workspace instance is recorded as ended in the transaction that deletes it.
 * The platform instance records no events; its expired rows go with the rest of oidc_payloads.
 */
async function endExpiredSessions(core: Core, now: number): Promise<number> {
  let total = 0
  for (;;) {
    const ended = await core.store.tx(async (tx) => {
      const rows = await tx.query<{ instanceId: string; accountId: string }>(EXPIRED_SESSIONS, [
        now,
        PLATFORM,
      ])
      for (const { instanceId, accountId } of rows) {
        const [account] = await tx.query<AccountRow>(ACCOUNT, [instanceId, accountId])
        if (account) await core.emit('session.ended', instanceId, userEventData(account), { tx })
      }
      return rows.length
    })
    total += ended
    if (ended < BATCH) return total
    await new Promise((resolve) => setTimeout(resolve, 0))
  }
}
