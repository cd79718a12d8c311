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
  /**
   * Counts one request against every bucket, or against none: allowed when all of them allow it
   * (one atomic statement), refused (the first refusing bucket's decision) otherwise. Every rule of
   * one call has the same period.
   */
  take(buckets: readonly (readonly [key: string, rule: RateRule])[]): Promise<RateDecision[]>
}

/**
 * The one limiter: GCRA (the generic cell rate algorithm, as in ATM networks and `redis-cell`), one
 * row per bucket holding its theoretical arrival time (TAT), so memory is O(1) per bucket whatever
 * the rate. A check of one or several buckets is one `INSERT … ON CONFLICT DO UPDATE … WHERE …
 * RETURNING`, each row updated only when its bucket has room; a request any bucket refuses counts in
 * none (the others give back what they took).
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
  // Typed casts: PostgreSQL cannot infer `$1 + $4`; SQLite reads DOUBLE PRECISION as REAL.
  const num = (n: number) => `CAST($${n} AS DOUBLE PRECISION)`
  const atNow = num(1)
  const period = num(2)
  // The bucket as of now: never before now (it refills no further than full), never more than one
  // period ahead (a TAT further out can only come from a clock that went back: a node's skew). Each
  // row's step is what its insert would have set, less now.
  const base = `${greatest}(${least}(rate_limits.tat, ${atNow} + ${period}), ${atNow})`
  const step = `(excluded.tat - ${atNow})`
  /** The statement for `n` buckets: `$1` now, `$2` the period, then each bucket's key and step. */
  const takeStatement = (n: number) => `
    INSERT INTO ${table} (key, tat)
    VALUES ${Array.from({ length: n }, (_, i) => `($${3 + 2 * i}, ${atNow} + ${num(4 + 2 * i)})`).join(', ')}
    ON CONFLICT (key) DO UPDATE SET tat = ${base} + ${step}
    WHERE ${base} + ${step} - ${atNow} <= ${period}
    RETURNING key, tat`
  const statements = [takeStatement(1), takeStatement(2), takeStatement(3)]
  const READ = `SELECT tat FROM ${table} WHERE key = $1`
  const GIVE_BACK = `UPDATE ${table} SET tat = tat - ${num(2)} WHERE key = $1`
  // Awaited by the first checks only: later ones skip even the microtask (this is on every API call).
  let created = !sqlite
  const ready = sqlite
    ? // In memory, not in a temp file (SQLite's default for temp tables); set before the table exists.
      store
        .exec('PRAGMA temp_store = MEMORY')
        .then(() =>
          store.exec('CREATE TEMP TABLE IF NOT EXISTS rate_limits (key TEXT PRIMARY KEY, tat REAL NOT NULL)'),
        )
        .then(() => {
          created = true
        })
    : Promise.resolve()
  let prunedAt = clock.now()
  const prune = (now: number) => {
    prunedAt = now
    store.exec(`DELETE FROM ${table} WHERE tat <= $1`, [now]).catch(() => {})
  }

  return {
    async take(buckets) {
      if (!created) await ready
      const now = clock.now()
      if (now - prunedAt > PRUNE_EVERY_MS) prune(now)
      const periodMs = buckets[0]?.[1].periodMs ?? 0
      const params: (string | number)[] = [now, periodMs]
      for (const [key, rule] of buckets) {
        if (rule.periodMs !== periodMs) throw new Error('one period per take')
        params.push(key, rule.periodMs / rule.limit)
      }
      const text = statements[buckets.length - 1] ?? takeStatement(buckets.length)
      const rows = await store.query<{ key: string; tat: number }>(text, params)
      const taken = new Map<string, number>()
      for (const r of rows) taken.set(r.key, Number(r.tat))
      const refused = buckets.find(([key]) => !taken.has(key))
      if (!refused) {
        return buckets.map(([key, rule]) => {
          const tat = taken.get(key)!
          const interval = rule.periodMs / rule.limit
          return {
            allowed: true,
            rule,
            remaining: Math.max(0, Math.floor((rule.periodMs - (tat - now)) / interval)),
            resetAt: Math.ceil(tat / 1000),
            retryAfter: 0,
          }
        })
      }
      // All or nothing: what the other buckets took for this request goes back (rare: a refusal).
      for (const [key, rule] of buckets)
        if (taken.has(key)) await store.exec(GIVE_BACK, [key, rule.periodMs / rule.limit])
      const [key, rule] = refused
      const interval = rule.periodMs / rule.limit
      const [row] = await store.query<{ tat: number }>(READ, [key])
      const tat = Math.min(Number(row?.tat ?? now), now + rule.periodMs)
      return [
        {
          allowed: false,
          rule,
          remaining: 0,
          resetAt: Math.ceil(tat / 1000),
          retryAfter: Math.max(1, Math.ceil((tat + interval - rule.periodMs - now) / 1000)),
        },
      ]
    },
  }
}
