import type { Conn } from '../db/store'
import type { Clock } from '../shared/clock'
import type { SharedBucket } from './buckets'
import type { Decision } from './decision'
import { LocalBuckets } from './local-buckets'

/** How often the table limiter drops the buckets that are full again (their rows say nothing). */
const PRUNE_EVERY_MS = 60_000

/** A shared bucket's check: its row's key, and its rule. */
type SharedCheck = readonly [key: string, rule: SharedBucket]

interface SharedLimiter {
  /**
   * Counts one request against every bucket, or against none: allowed when all of them allow it
   * (in one atomic step), refused (the first refusing bucket's decision) otherwise. Every rule of
   * one call has the same period. In memory (SQLite) the answer comes at once, not as a promise:
   * this runs on every API call.
   */
  take(buckets: readonly SharedCheck[], now: number): Decision[] | Promise<Decision[]>
}

/**
 * The shared buckets (`limitBuckets`: the control plane's): GCRA (the generic cell rate algorithm, as in ATM networks and `redis-cell`), one
 * number per bucket, its theoretical arrival time (TAT), so memory is O(1) per bucket whatever the
 * rate. A request any bucket of its check refuses counts in none.
 *
 * Where the buckets live follows the store:
 * - PostgreSQL (several nodes): the shared `rate_limits` table, and a check of one or several
 *   buckets is one `INSERT … ON CONFLICT DO UPDATE … WHERE … RETURNING`, each row updated only when
 *   its bucket has room (the others give back what they took). Exact across nodes: the row lock
 *   orders concurrent checks.
 * - SQLite: one process serves by construction (the serve lock), so its memory is the one place
 *   every request of the node meets: `LocalBuckets`, the same GCRA, checked and updated in one
 *   synchronous step (nothing runs in between), exact, 0.3 µs. A write statement per request cost
 *   10-20 µs inside the server (a third of an API call: `npm run bench -- apps-list-limiter`), even
 *   on an in-memory table. A restart refills every bucket.
 *
 * With T = period / limit, a request at `now` is allowed when max(tat, now) + T - now <= period;
 * then tat = max(tat, now) + T.
 */
export function sharedLimiter(store: Conn, clock: Clock): SharedLimiter {
  return store.dialect === 'sqlite' ? memoryLimiter() : tableLimiter(store, clock)
}

const interval = (rule: SharedBucket) => rule.periodMs / rule.limit

/** The decision of a bucket that took the request: its TAT is now `tat`. */
function allowed(rule: SharedBucket, tat: number, now: number): Decision {
  return {
    allowed: true,
    name: rule.name,
    limit: rule.limit,
    remaining: Math.max(0, Math.floor((rule.periodMs - (tat - now)) / interval(rule))),
    resetAt: Math.ceil(tat / 1000),
    retryAfter: 0,
  }
}

/** The decision of the bucket that refused: its TAT is `tat` (at most a period ahead). */
function refused(rule: SharedBucket, tat: number, now: number): Decision[] {
  return [
    {
      allowed: false,
      name: rule.name,
      limit: rule.limit,
      remaining: 0,
      resetAt: Math.ceil(tat / 1000),
      retryAfter: Math.max(1, Math.ceil((tat + interval(rule) - rule.periodMs - now) / 1000)),
    },
  ]
}

function memoryLimiter(): SharedLimiter {
  const buckets = new LocalBuckets()
  return {
    take(list, now) {
      const checks = list.map(([key, rule]) => ({ key, interval: interval(rule), tolerance: rule.periodMs }))
      const taken = buckets.takeEach(checks, now)
      if (Array.isArray(taken)) return list.map(([, rule], i) => allowed(rule, taken[i]!, now))
      const [key, rule] = list[taken.refused]!
      return refused(rule, buckets.current(key, rule.periodMs, now), now)
    },
  }
}

function tableLimiter(store: Conn, clock: Clock): SharedLimiter {
  // Typed casts: PostgreSQL cannot infer `$1 + $4`.
  const num = (n: number) => `CAST($${n} AS DOUBLE PRECISION)`
  const atNow = num(1)
  const period = num(2)
  // The bucket as of now: never before now (it refills no further than full), never more than one
  // period ahead (a TAT further out can only come from a clock that went back: a node's skew). Each
  // row's step is what its insert would have set, less now.
  const base = `GREATEST(LEAST(rate_limits.tat, ${atNow} + ${period}), ${atNow})`
  const step = `(excluded.tat - ${atNow})`
  /** The statement for `n` buckets: `$1` now, `$2` the period, then each bucket's key and step. */
  const takeStatement = (n: number) => `
    INSERT INTO rate_limits (key, tat)
    VALUES ${Array.from({ length: n }, (_, i) => `($${3 + 2 * i}, ${atNow} + ${num(4 + 2 * i)})`).join(', ')}
    ON CONFLICT (key) DO UPDATE SET tat = ${base} + ${step}
    WHERE ${base} + ${step} - ${atNow} <= ${period}
    RETURNING key, tat`
  const statements = [takeStatement(1), takeStatement(2), takeStatement(3)]
  const READ = 'SELECT tat FROM rate_limits WHERE key = $1'
  const GIVE_BACK = `UPDATE rate_limits SET tat = tat - ${num(2)} WHERE key = $1`
  let prunedAt = clock.now()

  return {
    async take(buckets, now) {
      if (now - prunedAt > PRUNE_EVERY_MS) {
        prunedAt = now
        store.exec('DELETE FROM rate_limits WHERE tat <= $1', [now]).catch(() => {})
      }
      const periodMs = buckets[0]?.[1].periodMs ?? 0
      const params: (string | number)[] = [now, periodMs]
      for (const [key, rule] of buckets) {
        if (rule.periodMs !== periodMs) throw new Error('one period per take')
        params.push(key, interval(rule))
      }
      const text = statements[buckets.length - 1] ?? takeStatement(buckets.length)
      const rows = await store.query<{ key: string; tat: number }>(text, params)
      const taken = new Map<string, number>()
      for (const r of rows) taken.set(r.key, Number(r.tat))
      const refusing = buckets.find(([key]) => !taken.has(key))
      if (!refusing) return buckets.map(([key, rule]) => allowed(rule, taken.get(key)!, now))
      // All or nothing: what the other buckets took for this request goes back (rare: a refusal).
      for (const [key, rule] of buckets)
        if (taken.has(key)) await store.exec(GIVE_BACK, [key, interval(rule)])
      const [key, rule] = refusing
      const [row] = await store.query<{ tat: number }>(READ, [key])
      return refused(rule, Math.min(Number(row?.tat ?? now), now + rule.periodMs), now)
    },
  }
}
