import { describe, expect, it } from 'bun:test'
import { LocalBuckets } from './local-buckets'

// The in-memory GCRA: the data plane's buckets, and the control plane's on SQLite (limiter.ts).
const perMinute = (key: string, limit: number) => ({ key, interval: 60_000 / limit, tolerance: 60_000 })

describe('LocalBuckets.takeEach', () => {
  it('takes from every bucket or from none', () => {
    const buckets = new LocalBuckets()
    const now = 1_000_000
    // The smaller bucket (2 a minute) refuses the third check: the larger one is not charged for it.
    expect(buckets.takeEach([perMinute('big', 3), perMinute('small', 2)], now)).toEqual([
      now + 20_000,
      now + 30_000,
    ])
    expect(buckets.takeEach([perMinute('big', 3), perMinute('small', 2)], now)).toEqual([
      now + 40_000,
      now + 60_000,
    ])
    expect(buckets.takeEach([perMinute('big', 3), perMinute('small', 2)], now)).toEqual({ refused: 1 })
    expect(buckets.takeEach([perMinute('big', 3)], now)).toEqual([now + 60_000])
    expect(buckets.takeEach([perMinute('big', 3)], now)).toEqual({ refused: 0 })
    // Time refills at the rule's pace: one more after an interval.
    expect(buckets.takeEach([perMinute('small', 2)], now + 30_000)).toEqual([now + 90_000])
  })
})
