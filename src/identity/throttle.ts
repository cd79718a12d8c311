import type { Core } from '../core'
import { DEFAULT_LOGIN_POLICY, type LoginPolicy } from './policy'

export interface ThrottleRule {
  /** Attempts allowed inside the window (in flight or failed) before the key is refused. */
  limit: number
  windowMs: number
  /** How long a key stays locked once its failures reach the limit. */
  lockMs: number
}

export type ThrottleEntry = [key: string, rule: ThrottleRule]

/**
 * What a counter counts: sign-in failures per account (password and MFA share it), sign-ins per
 * client address, reset mails per address, verification mails per address.
 */
export const THROTTLE_KINDS = ['acct', 'ip', 'reset', 'verify'] as const

/** A counter's key names its instance, so the instance's counters go with it. */
export const throttleKey = (kind: (typeof THROTTLE_KINDS)[number], instanceId: string, who: string) =>
  `${kind}:${instanceId}:${who}`

const lockRule = (threshold: number, minutes: number): ThrottleRule => ({
  limit: threshold,
  windowMs: minutes * 60_000,
  lockMs: minutes * 60_000,
})

/**
 * The per-account lock of an instance's login policy: `lockoutThreshold` failures within
 * `lockoutMinutes` lock the account for `lockoutMinutes`; null when the policy never locks (0).
 * Every factor of a sign-in (password, TOTP, recovery code, passkey) counts its failures on the
 * same key, `throttleKey('acct', instanceId, email)`, with this rule.
 */
export const accountLockRule = (
  policy: Pick<LoginPolicy, 'lockoutThreshold' | 'lockoutMinutes'>,
): ThrottleRule | null =>
  policy.lockoutThreshold > 0 ? lockRule(policy.lockoutThreshold, policy.lockoutMinutes) : null

/**
 * Brute-force protection for sign-in, persisted across restarts: per client IP always; per account
 * by the instance's policy (`accountLockRule`), `account` being the default policy's lock.
 */
export const SIGN_IN_RULES = {
  account: lockRule(DEFAULT_LOGIN_POLICY.lockoutThreshold, DEFAULT_LOGIN_POLICY.lockoutMinutes),
  ip: { limit: 30, windowMs: 15 * 60_000, lockMs: 15 * 60_000 },
} satisfies Record<string, ThrottleRule>

// $1 key, $2 now, $3 now - windowMs (the window rolled when it started before), $4 now - 2 windowMs
// (pending counts older are stale), $5 limit. The DO UPDATE's WHERE refuses the slot (no row
// returned) while the key is locked or its failures and pending checks fill the window.
const ROLLED = 'login_throttle.window_start < $3'
const STALE = 'login_throttle.window_start < $4'
const TAKE = `
  INSERT INTO login_throttle (key, failures, pending, window_start, locked_until) VALUES ($1, 0, 1, $2, NULL)
  ON CONFLICT (key) DO UPDATE SET
    failures = CASE WHEN ${ROLLED} THEN 0 ELSE login_throttle.failures END,
    pending = CASE WHEN ${STALE} THEN 1 ELSE login_throttle.pending + 1 END,
    window_start = CASE WHEN ${ROLLED} THEN $2 ELSE login_throttle.window_start END,
    locked_until = NULL
  WHERE (login_throttle.locked_until IS NULL OR login_throttle.locked_until <= $2)
    AND (CASE WHEN ${ROLLED} THEN 0 ELSE login_throttle.failures END)
      + (CASE WHEN ${STALE} THEN 0 ELSE login_throttle.pending END) < $5
  RETURNING failures`

const GIVE_BACK =
  'UPDATE login_throttle SET pending = CASE WHEN pending > 0 THEN pending - 1 ELSE 0 END WHERE key = $1'

// $1 key, $2 limit, $3 until.
const FAIL = `
  UPDATE login_throttle SET
    failures = failures + 1,
    pending = CASE WHEN pending > 0 THEN pending - 1 ELSE 0 END,
    locked_until = CASE WHEN failures + 1 >= $2 AND locked_until IS NULL THEN $3 ELSE locked_until END
  WHERE key = $1`

/**
 * Counts attempts before the slow check, never after it: `reserve` takes a slot in one atomic
 * upsert, so however many requests arrive at once, on however many nodes, at most `limit` per
 * window get past it. A slot is `pending` while its check runs; the caller then reports the
 * outcome: `fail` turns it into a failure (and locks a key that reached its limit), `release`
 * gives it back, `reset` forgets the key. Pending slots outlive a window's end, so guesses sent
 * just before and just after it are still counted together; a pending count older than two
 * windows (its process died mid-check) is dropped.
 *
 * Raw SQL valid on SQLite and PostgreSQL. The window arithmetic is done on the caller's side
 * (`window_start < now - windowMs` rather than `window_start + windowMs < now`, the same test on
 * millisecond integers), so no parameter is an operand PostgreSQL would have to type.
 */
export class LoginThrottle {
  constructor(private readonly core: Core) {}

  /**
   * Takes one attempt slot on every key. Resolves 0 when all were taken; otherwise the milliseconds
   * to wait, and nothing stays taken.
   */
  async reserve(entries: ThrottleEntry[]): Promise<number> {
    const now = this.core.clock.now()
    for (const [i, [key, rule]] of entries.entries()) {
      const taken = await this.core.store.query(TAKE, [
        key,
        now,
        now - rule.windowMs,
        now - 2 * rule.windowMs,
        rule.limit,
      ])
      if (taken.length > 0) continue
      await this.release(entries.slice(0, i))
      const [row] = await this.core.store.query<{ locked_until: number | null }>(
        'SELECT locked_until FROM login_throttle WHERE key = $1',
        [key],
      )
      const lockedUntil = row?.locked_until ?? 0
      // Without a lock the slots are held by attempts still being checked: if they fail, the key
      // locks for lockMs from about now.
      return lockedUntil > now ? lockedUntil - now : rule.lockMs
    }
    return 0
  }

  /** The reserved attempts failed (or were spent): they count, and a key that reached its limit locks. */
  async fail(entries: ThrottleEntry[]): Promise<void> {
    const now = this.core.clock.now()
    for (const [key, rule] of entries) await this.core.store.exec(FAIL, [key, rule.limit, now + rule.lockMs])
  }

  /** Gives reserved slots back: the attempt succeeded or was never made. */
  async release(entries: ThrottleEntry[]): Promise<void> {
    for (const [key] of entries) await this.core.store.exec(GIVE_BACK, [key])
  }

  async reset(key: string): Promise<void> {
    await this.core.store.exec('DELETE FROM login_throttle WHERE key = $1', [key])
  }
}

export const minutesText = (ms: number) => {
  const minutes = Math.ceil(ms / 60_000)
  return minutes === 1 ? '1 minute' : `${minutes} minutes`
}
