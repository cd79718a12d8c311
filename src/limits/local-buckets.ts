/** What a local bucket decided. */
export interface LocalDecision {
  allowed: boolean
  /** Whole seconds until one more request fits (`Retry-After`); 0 when allowed. */
  retryAfter: number
}

/** Keys kept before the buckets that are full again are dropped: memory stays O(busy keys). */
const PRUNE_AT = 10_000

/**
 * Token buckets in this process's memory, by GCRA: one number per key (when the bucket is next
 * empty). For the data plane only, where a store round trip per request would cost more than the
 * limit protects (DESIGN "Rate limits"); the control plane's buckets are rows (`limiter.ts`).
 */
export class LocalBuckets {
  private readonly tat = new Map<string, number>()

  /** One request against `key`: `ratePerSecond` sustained, `burst` at once. */
  take(key: string, ratePerSecond: number, burst: number, now: number): LocalDecision {
    const interval = 1000 / ratePerSecond
    const tolerance = burst * interval
    const next = Math.max(this.tat.get(key) ?? now, now) + interval
    if (next - now > tolerance)
      return { allowed: false, retryAfter: Math.max(1, Math.ceil((next - tolerance - now) / 1000)) }
    if (this.tat.size >= PRUNE_AT && !this.tat.has(key)) this.prune(now)
    this.tat.set(key, next)
    return { allowed: true, retryAfter: 0 }
  }

  private prune(now: number) {
    for (const [key, tat] of this.tat) if (tat <= now) this.tat.delete(key)
  }
}
