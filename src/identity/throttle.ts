import type { Statement } from 'bun:sqlite'
import type { Core } from '../core'

export interface ThrottleRule {
  /** Failures allowed inside the window before the key is locked. */
  limit: number
  windowMs: number
  lockMs: number
}

/** Brute-force protection for sign-in: per account and per client IP, persisted across restarts. */
export const SIGN_IN_RULES = {
  account: { limit: 5, windowMs: 15 * 60_000, lockMs: 15 * 60_000 },
  ip: { limit: 30, windowMs: 15 * 60_000, lockMs: 15 * 60_000 },
} satisfies Record<string, ThrottleRule>

export class LoginThrottle {
  private readonly get: Statement
  private readonly put: Statement
  private readonly clear: Statement

  constructor(private readonly core: Core) {
    const sql = core.db.$client
    this.get = sql.prepare('SELECT failures, window_start, locked_until FROM login_throttle WHERE key = $key')
    this.put = sql.prepare(`
      INSERT INTO login_throttle (key, failures, window_start, locked_until) VALUES ($key, $failures, $windowStart, $lockedUntil)
      ON CONFLICT (key) DO UPDATE SET failures = excluded.failures, window_start = excluded.window_start, locked_until = excluded.locked_until`)
    this.clear = sql.prepare('DELETE FROM login_throttle WHERE key = $key')
  }

  /** Milliseconds until the first locked key unlocks, or 0 when every key may try. */
  retryAfterMs(keys: string[]): number {
    const now = this.core.clock.now()
    let wait = 0
    for (const key of keys) {
      const row = this.get.get({ key }) as { locked_until: number | null } | null
      if (row?.locked_until && row.locked_until > now) wait = Math.max(wait, row.locked_until - now)
    }
    return wait
  }

  fail(entries: [key: string, rule: ThrottleRule][]): void {
    const now = this.core.clock.now()
    for (const [key, rule] of entries) {
      const row = this.get.get({ key }) as { failures: number; window_start: number } | null
      const fresh = !row || now - row.window_start > rule.windowMs
      const failures = fresh ? 1 : row.failures + 1
      this.put.run({
        key,
        failures,
        windowStart: fresh ? now : row.window_start,
        lockedUntil: failures >= rule.limit ? now + rule.lockMs : null,
      })
    }
  }

  reset(key: string): void {
    this.clear.run({ key })
  }
}

export const minutesText = (ms: number) => {
  const minutes = Math.ceil(ms / 60_000)
  return minutes === 1 ? '1 minute' : `${minutes} minutes`
}
