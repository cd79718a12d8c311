// legs: once — unit test; no store
import { describe, expect, it } from 'bun:test'
import { LocalBuckets } from './local-buckets'

// The in-memory GCRA: the data plane's buckets, and the control plane's on SQLite (gcra.ts).
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

describe('LocalBuckets.check', () => {
  it('leaves a reserve to the checks that may use the whole burst', () => {
    const buckets = new LocalBuckets()
    const now = 1_000_000
    const take = (usable: number) => {
      const check = buckets.check('instance', 1, 4, now, usable)
      if (check.allowed) buckets.commit('instance', check.tat, now)
      return check.allowed
    }
    expect([take(3), take(3), take(3), take(3)]).toEqual([true, true, true, false])
    expect(buckets.check('instance', 1, 4, now, 3)).toEqual({ allowed: false, retryAfter: 1 })
    expect([take(4), take(4)]).toEqual([true, false])
    // The reserve used, the others wait for what it took back as well: 2 s.
    expect(buckets.check('instance', 1, 4, now, 3)).toEqual({ allowed: false, retryAfter: 2 })
  })
})

describe('LocalBuckets with a most of keys', () => {
  it('keeps at most that many however many buckets are busy, forgetting those nearest to full', () => {
    const buckets = new LocalBuckets(100)
    const now = 1_000_000
    // A thousand keys, one request each a millisecond apart, every bucket busy for a second.
    for (let i = 0; i < 1000; i++) {
      expect(buckets.take(`k${i}`, 1, 1, now + i)).toEqual({ allowed: true, retryAfter: 0 })
      expect(buckets.size).toBeLessThanOrEqual(100)
    }
    // The latest are remembered; the first were forgotten, though their buckets were still busy.
    expect(buckets.take('k999', 1, 1, now + 999)).toEqual({ allowed: false, retryAfter: 1 })
    expect(buckets.take('k0', 1, 1, now + 999)).toEqual({ allowed: true, retryAfter: 0 })
  })
})
