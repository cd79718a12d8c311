/** What a local bucket decided. */
interface LocalDecision {
  allowed: boolean
  /** Whole seconds until one more request fits (`Retry-After`); 0 when allowed. */
  retryAfter: number
}

/** One bucket of a check: one request costs `interval` ms; the bucket holds `tolerance` ms of them. */
interface LocalBucket {
  key: string
  interval: number
  tolerance: number
}

/**
 * Keys kept before the buckets that are full again are dropped: memory stays O(busy keys). After a
 * prune the next one waits until the map has doubled, so many busy keys cost no scan per request.
 */
const PRUNE_AT = 10_000

/** Whether one more request fits a bucket, and the TAT it would set (`commit`): nothing taken yet. */
type LocalCheck = (LocalDecision & { allowed: false }) | { allowed: true; retryAfter: 0; tat: number }

/**
 * Token buckets in this process's memory, by GCRA: one number per key, its theoretical arrival
 * time (TAT, when the bucket is next empty). The data plane's per-node buckets (`node.ts`; DESIGN
 * "Rate limits": a store round trip per request would cost more than the limit protects), and the
 * control plane's on SQLite, where one process serves by construction (`gcra.ts`).
 */
export class LocalBuckets {
  private tat = new Map<string, number>()
  private pruneAt: number

  /**
   * `max`: the most keys kept, however many are busy. Past it, a prune forgets the busy buckets
   * nearest to full, down to half of it (a forgotten key starts full: it gets back what it had
   * used): for keys a client picks, such as its address, whose flood must not grow memory.
   */
  constructor(private readonly max = Number.POSITIVE_INFINITY) {
    this.pruneAt = Math.min(PRUNE_AT, max)
  }

  /** Keys held now (busy buckets, and full ones not yet pruned). */
  get size(): number {
    return this.tat.size
  }

  /** One request against `key`: `ratePerSecond` sustained, `burst` at once. */
  take(key: string, ratePerSecond: number, burst: number, now: number): LocalDecision {
    const check = this.check(key, ratePerSecond, burst, now)
    if (check.allowed) this.commit(key, check.tat, now)
    return check.allowed ? { allowed: true, retryAfter: 0 } : check
  }

  /**
   * Whether one more request against `key` fits, taking nothing: `usable` of the `burst` may be
   * used by this request (a bucket with a share kept for other requests: they check with all of it).
   */
  check(key: string, ratePerSecond: number, burst: number, now: number, usable = burst): LocalCheck {
    const interval = 1000 / ratePerSecond
    const next = this.after(key, interval, burst * interval, now)
    const room = usable * interval
    if (next - now > room)
      return { allowed: false, retryAfter: Math.max(1, Math.ceil((next - room - now) / 1000)) }
    return { allowed: true, retryAfter: 0, tat: next }
  }

  /** Takes the request a `check` of `key` allowed, with the TAT it answered. */
  commit(key: string, tat: number, now: number): void {
    this.set(key, tat, now)
  }

  /**
   * One request against every bucket, or against none: the TAT of each bucket after it, in order,
   * or the index of the first bucket that has no room (nothing taken). Synchronous, so nothing can
   * run between the check and the update.
   */
  takeEach(buckets: readonly LocalBucket[], now: number): number[] | { refused: number } {
    const next = new Array<number>(buckets.length)
    for (let i = 0; i < buckets.length; i++) {
      const { key, interval, tolerance } = buckets[i]!
      const tat = this.after(key, interval, tolerance, now)
      if (tat - now > tolerance) return { refused: i }
      next[i] = tat
    }
    for (let i = 0; i < buckets.length; i++) this.set(buckets[i]!.key, next[i]!, now)
    return next
  }

  /** The bucket's TAT as of now (it refills no further than full), never more than `tolerance` ahead. */
  current(key: string, tolerance: number, now: number): number {
    return Math.max(Math.min(this.tat.get(key) ?? now, now + tolerance), now)
  }

  /** The TAT one more request would set. */
  private after(key: string, interval: number, tolerance: number, now: number): number {
    return this.current(key, tolerance, now) + interval
  }

  private set(key: string, tat: number, now: number) {
    if (this.tat.size >= this.pruneAt && !this.tat.has(key)) this.prune(now)
    this.tat.set(key, tat)
  }

  private prune(now: number) {
    for (const [key, tat] of this.tat) if (tat <= now) this.tat.delete(key)
    if (this.tat.size >= this.max) {
      // The earliest TATs are the buckets nearest to full: forgetting them forgives the least.
      const busiest = [...this.tat].sort((a, b) => b[1] - a[1])
      this.tat = new Map(busiest.slice(0, Math.floor(this.max / 2)))
    }
    this.pruneAt = Math.min(this.max, Math.max(PRUNE_AT, 2 * this.tat.size))
  }
}
