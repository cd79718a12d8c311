import type { Statement } from 'bun:sqlite'
import type { Core } from '../core'

export interface ThrottleRule {
  /** Attempts allowed inside the window (in flight or failed) before the key is refused. */
  limit: number
  windowMs: number
  /** How long a key stays locked once its failures reach the limit. */
  lockMs: number
}

export type ThrottleEntry = [key: string, rule: ThrottleRule]

/** What a counter counts: sign-ins per account, sign-ins per client address, reset mails per address. */
export const THROTTLE_KINDS = ['acct', 'ip', 'reset'] as const

/** A counter's key names its instance, so the instance's counters go with it. */
export const throttleKey = (kind: (typeof THROTTLE_KINDS)[number], instanceId: string, who: string) =>
  `${kind}:${instanceId}:${who}`

/** Brute-force protection for sign-in: per account and per client IP, persisted across restarts. */
export const SIGN_IN_RULES = {
  account: { limit: 5, windowMs: 15 * 60_000, lockMs: 15 * 60_000 },
  ip: { limit: 30, windowMs: 15 * 60_000, lockMs: 15 * 60_000 },
} satisfies Record<string, ThrottleRule>

/**
 * Counts attempts before the slow check, never after it: `reserve` takes a slot in one atomic
 * upsert, so however many requests arrive at once, at most `limit` per window get past it. A slot
 * is `pending` while its check runs; the caller then reports the outcome: `fail` turns it into a
 * failure (and locks a key that reached its limit), `release` gives it back, `reset` forgets the
 * key. Pending slots outlive a window's end, so guesses sent just before and just after it are
 * still counted together; a pending count older than two windows (its process died mid-check) is
 * dropped.
 */
export class LoginThrottle {
  private readonly take: Statement
  private readonly giveBack: Statement
  private readonly failed: Statement
  private readonly get: Statement
  private readonly clear: Statement

  constructor(private readonly core: Core) {
    const sql = core.db.$client
    // The DO UPDATE's WHERE refuses the slot (no row returned) while the key is locked or its
    // failures and pending checks fill the window. Plain INSERT … ON CONFLICT … RETURNING, so
    // PostgreSQL runs the same statement.
    const rolled = 'login_throttle.window_start + $windowMs < $now'
    const stale = 'login_throttle.window_start + 2 * $windowMs < $now'
    this.take = sql.prepare(`
      INSERT INTO login_throttle (key, failures, pending, window_start, locked_until) VALUES ($key, 0, 1, $now, NULL)
      ON CONFLICT (key) DO UPDATE SET
        failures = CASE WHEN ${rolled} THEN 0 ELSE login_throttle.failures END,
        pending = CASE WHEN ${stale} THEN 1 ELSE login_throttle.pending + 1 END,
        window_start = CASE WHEN ${rolled} THEN $now ELSE login_throttle.window_start END,
        locked_until = NULL
      WHERE (login_throttle.locked_until IS NULL OR login_throttle.locked_until <= $now)
        AND (CASE WHEN ${rolled} THEN 0 ELSE login_throttle.failures END)
          + (CASE WHEN ${stale} THEN 0 ELSE login_throttle.pending END) < $limit
      RETURNING failures`)
    this.giveBack = sql.prepare(`
      UPDATE login_throttle SET pending = CASE WHEN pending > 0 THEN pending - 1 ELSE 0 END WHERE key = $key`)
    this.failed = sql.prepare(`
      UPDATE login_throttle SET
        failures = failures + 1,
        pending = CASE WHEN pending > 0 THEN pending - 1 ELSE 0 END,
        locked_until = CASE WHEN failures + 1 >= $limit AND locked_until IS NULL THEN $until ELSE locked_until END
      WHERE key = $key`)
    this.get = sql.prepare('SELECT locked_until FROM login_throttle WHERE key = $key')
    this.clear = sql.prepare('DELETE FROM login_throttle WHERE key = $key')
  }

  /**
   * Takes one attempt slot on every key. Returns 0 when all were taken; otherwise the milliseconds
   * to wait, and nothing stays taken.
   */
  reserve(entries: ThrottleEntry[]): number {
    const now = this.core.clock.now()
    for (const [i, [key, rule]] of entries.entries()) {
      const taken = this.take.get({ key, now, windowMs: rule.windowMs, limit: rule.limit })
      if (taken) continue
      this.release(entries.slice(0, i))
      const row = this.get.get({ key }) as { locked_until: number | null } | null
      // Without a lock the slots are held by attempts still being checked: if they fail, the key
      // locks for lockMs from about now.
      return row?.locked_until && row.locked_until > now ? row.locked_until - now : rule.lockMs
    }
    return 0
  }

  /** The reserved attempts failed (or were spent): they count, and a key that reached its limit locks. */
  fail(entries: ThrottleEntry[]): void {
    const now = this.core.clock.now()
    for (const [key, rule] of entries) this.failed.run({ key, limit: rule.limit, until: now + rule.lockMs })
  }

  /** Gives reserved slots back: the attempt succeeded or was never made. */
  release(entries: ThrottleEntry[]): void {
    for (const [key] of entries) this.giveBack.run({ key })
  }

  reset(key: string): void {
    this.clear.run({ key })
  }
}

export const minutesText = (ms: number) => {
  const minutes = Math.ceil(ms / 60_000)
  return minutes === 1 ? '1 minute' : `${minutes} minutes`
}
