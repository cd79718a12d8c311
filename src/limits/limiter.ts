import type { Conn } from '../db/store'
import type { Clock } from '../shared/clock'

/** How often a limiter drops the buckets that are full again (their rows say nothing). */
const PRUNE_EVERY_MS = 60_000

/** A limit: `limit` requests per `periodMs`, all of which may come at once (the burst). */
export interface RateRule {
  /** What the 429 names: `workspace`, `organisation`, `batch`, `address`. */
  name: string
  limit: number
  periodMs: number
}

/** What one check decided, with what the `X-RateLimit-*` headers say. */
export interface RateDecision {
  allowed: boolean
  rule: RateRule
  /** Requests left now (0 when refused). */
  remaining: number
  /** Unix seconds when the bucket is full again (`X-RateLimit-Reset`). */
  resetAt: number
  /** Whole seconds until one more request is allowed (`Retry-After`); 0 when allowed. */
  retryAfter: number
}

export interface Limiter {
  /** Counts one request against `key` under `rule` (only when allowed): one atomic statement. */
  take(key: string, rule: RateRule): Promise<RateDecision>
}

/**
 * The one limiter: GCRA (the generic cell rate algorithm, as in ATM networks and `redis-cell`), one
 * row per bucket holding its theoretical arrival time (TAT), so memory is O(1) per bucket whatever
 * the rate. Each check is one `INSERT … ON CONFLICT DO UPDATE … WHERE … RETURNING`: a refused request
 * does not count.
 *
 * On PostgreSQL the buckets are the shared `rate_limits` table: exact across nodes (the row lock
 * orders concurrent checks). On SQLite there is one node by construction (the serve lock), so the
 * same statement runs on a `temp.rate_limits` table of its connection: in memory, about 2 µs instead
 * of 15 µs for a journaled write, and exact; a restart refills every bucket. Either way buckets that
 * are full again are pruned by this limiter once a minute.
 *
 * With T = period / limit, a request at `now` is allowed when max(tat, now) + T - now <= period;
 * then tat = max(tat, now) + T.
 */
export function createLimiter(store: Conn, clock: Clock): Limiter {
  const sqlite = store.dialect === 'sqlite'
  const table = sqlite ? 'temp.rate_limits' : 'rate_limits'
  const [greatest, least] = sqlite ? ['MAX', 'MIN'] : ['GREATEST', 'LEAST']
  // Typed casts: PostgreSQL cannot infer `$2 + $3`; SQLite reads DOUBLE PRECISION as REAL.
  const atNow = 'CAST($2 AS DOUBLE PRECISION)'
  const step = 'CAST($3 AS DOUBLE PRECISION)'
  const period = 'CAST($4 AS DOUBLE PRECISION)'
  // The bucket as of now: never before now (it refills no further than full), never more than one
  // period ahead (a TAT further out can only come from a clock that went back: a node's skew).
  const base = `${greatest}(${least}(rate_limits.tat, ${atNow} + ${period}), ${atNow})`
  const TAKE = `
    INSERT INTO ${table} (key, tat) VALUES ($1, ${atNow} + ${step})
    ON CONFLICT (key) DO UPDATE SET tat = ${base} + ${step}
    WHERE ${base} + ${step} - ${atNow} <= ${period}
    RETURNING tat`
  const READ = `SELECT tat FROM ${table} WHERE key = $1`
  const ready = sqlite
    ? store.exec('CREATE TEMP TABLE IF NOT EXISTS rate_limits (key TEXT PRIMARY KEY, tat REAL NOT NULL)')
    : Promise.resolve(0)
  let prunedAt = clock.now()
  const prune = (now: number) => {
    prunedAt = now
    store.exec(`DELETE FROM ${table} WHERE tat <= $1`, [now]).catch(() => {})
  }

  return {
    async take(key, rule) {
      await ready
      const now = clock.now()
      if (now - prunedAt > PRUNE_EVERY_MS) prune(now)
      const interval = rule.periodMs / rule.limit
      const [taken] = await store.query<{ tat: number }>(TAKE, [key, now, interval, rule.periodMs])
      if (taken) {
        const tat = Number(taken.tat)
        return {
          allowed: true,
          rule,
          remaining: Math.max(0, Math.floor((rule.periodMs - (tat - now)) / interval)),
          resetAt: Math.ceil(tat / 1000),
          retryAfter: 0,
        }
      }
      // Refused: the bucket as it stands says when the next request fits.
      const [row] = await store.query<{ tat: number }>(READ, [key])
      const tat = Math.min(Number(row?.tat ?? now), now + rule.periodMs)
      return {
        allowed: false,
        rule,
        remaining: 0,
        resetAt: Math.ceil(tat / 1000),
        retryAfter: Math.max(1, Math.ceil((tat + interval - rule.periodMs - now) / 1000)),
      }
    },
  }
}
