import type { Config } from '../config'
import type { Store } from '../db/store'
import type { Clock } from '../shared/clock'
import { type AttemptCheck, attemptLimiter } from './attempts'
import { type AttemptRule, type BucketName, type BucketsOf, type LimitBuckets, limitBuckets } from './buckets'
import type { Decision } from './decision'
import { sharedLimiter } from './gcra'
import { type NodeCall, nodeLimiter } from './node'
import { takeWindow, type WindowCall, type WindowDecision } from './window'

type SharedName = BucketsOf<'shared'>
type AttemptName = BucketsOf<'attempts'>

/** A check of `takeAll`: a bucket and its key; an attempt bucket may carry a rule of its own (an instance's lockout policy). */
export type Check =
  | readonly [bucket: SharedName, key: string]
  | readonly [bucket: AttemptName, key: string, rule?: AttemptRule | null]

/** Attempt checks only: what `fail` and `release` settle. */
export type AttemptEntry = readonly [bucket: AttemptName, key: string, rule?: AttemptRule | null]

export interface Limiter {
  /** Every bucket's rule, as configured (`limitBuckets`). */
  readonly buckets: LimitBuckets
  /**
   * One request against one bucket's key, at `now` (the core's clock by default): what it decided,
   * or null when the bucket is off (a limit of 0). Shared and node buckets answer at once, not as a
   * promise, wherever they can (in memory): they run on every request.
   */
  take(bucket: SharedName, key: string, now?: number): Decision | null | Promise<Decision | null>
  take(bucket: 'dataPlane', key: string, call: NodeCall, now?: number): Decision | null
  take(bucket: AttemptName, key: string, rule?: AttemptRule | null, now?: number): Promise<Decision>
  take(bucket: 'webhookEgress', key: string, call: WindowCall, now?: number): Promise<WindowDecision>
  /**
   * One request against every check, or against none (the buckets of one kind: shared or
   * attempts): each one's decision when all allowed it, otherwise only the refusing one's. Checks
   * of buckets that are off are left out.
   */
  takeAll(checks: readonly Check[], now?: number): Decision[] | Promise<Decision[]>
  /** The attempts taken failed (or were spent): they count, and a key that reached its limit locks. */
  fail(entries: readonly AttemptEntry[], now?: number): Promise<void>
  /** Gives taken attempts back: the attempt succeeded or was never made. */
  release(entries: readonly AttemptEntry[]): Promise<void>
  /** Forgets an attempt bucket's key (a successful sign-in clears its failures). */
  forget(bucket: AttemptName, key: string): Promise<void>
}

/**
 * The one limiter: every rate the platform counts, in named buckets (`limitBuckets`), each kept
 * where its kind needs it:
 * - shared (the control plane: workspace, organisation, address, batch): GCRA, exact across nodes
 *   (`gcra.ts`: the `rate_limits` table on PostgreSQL, memory on SQLite);
 * - node (the data plane): per node in memory, divided by the live nodes (`node.ts`);
 * - attempts (the sign-in throttle, reset and verification mails): store rows with a lock
 *   (`attempts.ts`);
 * - window (webhook egress): per-second rows in the caller's transaction (`window.ts`).
 */
export function createLimiter(
  store: Store,
  clock: Clock,
  config: Pick<Config, 'rateLimits' | 'webhooks'>,
): Limiter {
  const buckets = limitBuckets(config)
  const shared = sharedLimiter(store, clock)
  const node = nodeLimiter(store)
  const attempts = attemptLimiter(store)
  const attemptCheck = ([bucket, key, rule]: AttemptEntry): AttemptCheck => {
    const b = buckets[bucket]
    return [`${b.prefix}:${key}`, rule ?? b, bucket]
  }

  const takeAll = (checks: readonly Check[], now = clock.now()): Decision[] | Promise<Decision[]> => {
    if (checks.every((c): c is readonly [SharedName, string] => buckets[c[0]].kind === 'shared')) {
      const on = checks.filter(([bucket]) => buckets[bucket].limit > 0)
      return on.length
        ? shared.take(
            on.map(([b, key]) => [`${buckets[b].prefix}:${key}`, buckets[b]]),
            now,
          )
        : []
    }
    if (checks.some((c) => buckets[c[0]].kind === 'shared')) throw new Error('one kind of bucket per take')
    return attempts.take((checks as readonly AttemptEntry[]).map(attemptCheck), now)
  }
  const first = (decisions: Decision[] | Promise<Decision[]>) =>
    decisions instanceof Promise ? decisions.then((d) => d[0] ?? null) : (decisions[0] ?? null)

  function take(bucket: BucketName, key: string, call?: unknown, now?: number): unknown {
    const b = buckets[bucket]
    switch (b.kind) {
      case 'shared':
        return first(takeAll([[bucket as SharedName, key]], (call as number | undefined) ?? clock.now()))
      case 'node':
        return b.rps > 0 ? node(b, key, call as NodeCall, now ?? clock.now()) : null
      case 'attempts':
        return attempts
          .take([attemptCheck([bucket as AttemptName, key, call as AttemptRule | null])], now ?? clock.now())
          .then((d) => d[0]!)
      case 'window':
        return takeWindow(b, key, call as WindowCall, now ?? clock.now())
    }
  }

  return {
    buckets,
    take: take as Limiter['take'],
    takeAll,
    fail: (entries, now = clock.now()) => attempts.fail(entries.map(attemptCheck), now),
    release: (entries) => attempts.release(entries.map(attemptCheck)),
    forget: (bucket, key) => attempts.forget(`${buckets[bucket].prefix}:${key}`),
  }
}
