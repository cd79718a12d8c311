import type { Core } from '../core'
import { deleteInBatches } from '../db/purge'

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
