import type { Conn } from '../db/store'
import type { AttemptRule } from './buckets'
import type { Decision } from './decision'

/** An attempt bucket's check: its row's key, its rule, and its name (what a decision says it was). */
export type AttemptCheck = readonly [key: string, rule: AttemptRule, name: string]

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
  RETURNING failures, pending, window_start`

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
 * Counts attempts before the slow check, never after it: `take` takes a slot in one atomic
 * upsert, so however many requests arrive at once, on however many nodes, at most `limit` per
 * window get past it. A slot is `pending` while its check runs; the caller then reports the
 * outcome: `fail` turns it into a failure (and locks a key that reached its limit), `release`
 * gives it back, `forget` forgets the key. Pending slots outlive a window's end, so guesses sent
 * just before and just after it are still counted together; a pending count older than two
 * windows (its process died mid-check) is dropped.
 *
 * Raw SQL valid on SQLite and PostgreSQL. The window arithmetic is done on the caller's side
 * (`window_start < now - windowMs` rather than `window_start + windowMs < now`, the same test on
 * millisecond integers), so no parameter is an operand PostgreSQL would have to type.
 */
export function attemptLimiter(store: Conn) {
  const release = async (checks: readonly AttemptCheck[]) => {
    for (const [key] of checks) await store.exec(GIVE_BACK, [key])
  }
  return {
    /**
     * Takes one attempt slot on every key: each one's decision when all were taken; otherwise the
     * refusing one's, and nothing stays taken.
     */
    async take(checks: readonly AttemptCheck[], now: number): Promise<Decision[]> {
      const decisions: Decision[] = []
      for (const [i, [key, rule, name]] of checks.entries()) {
        const [taken] = await store.query<{ failures: number; pending: number; window_start: number }>(TAKE, [
          key,
          now,
          now - rule.windowMs,
          now - 2 * rule.windowMs,
          rule.limit,
        ])
        if (taken) {
          decisions.push({
            allowed: true,
            name,
            limit: rule.limit,
            remaining: Math.max(0, rule.limit - Number(taken.failures) - Number(taken.pending)),
            resetAt: Math.ceil((Number(taken.window_start) + rule.windowMs) / 1000),
            retryAfter: 0,
          })
          continue
        }
        await release(checks.slice(0, i))
        const [row] = await store.query<{ locked_until: number | null }>(
          'SELECT locked_until FROM login_throttle WHERE key = $1',
          [key],
        )
        const lockedUntil = Number(row?.locked_until ?? 0)
        // Without a lock the slots are held by attempts still being checked: if they fail, the key
        // locks for lockMs from about now.
        const wait = lockedUntil > now ? lockedUntil - now : rule.lockMs
        return [
          {
            allowed: false,
            name,
            limit: rule.limit,
            remaining: 0,
            resetAt: Math.ceil((now + wait) / 1000),
            retryAfter: Math.ceil(wait / 1000),
          },
        ]
      }
      return decisions
    },

    /** The taken attempts failed (or were spent): they count, and a key that reached its limit locks. */
    async fail(checks: readonly AttemptCheck[], now: number): Promise<void> {
      for (const [key, rule] of checks) await store.exec(FAIL, [key, rule.limit, now + rule.lockMs])
    },

    /** Gives taken slots back: the attempt succeeded or was never made. */
    release,

    async forget(key: string): Promise<void> {
      await store.exec('DELETE FROM login_throttle WHERE key = $1', [key])
    },
  }
}

/** A wait (whole seconds) as a person reads it, in minutes rounded up. */
export const minutesText = (seconds: number) => {
  const minutes = Math.ceil(seconds / 60)
  return minutes === 1 ? '1 minute' : `${minutes} minutes`
}
