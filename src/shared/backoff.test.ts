// legs: once — unit test; no store
import { describe, expect, it } from 'bun:test'
import { backoffDelayMs, withBackoff } from './backoff'

describe('backoffDelayMs', () => {
  it('doubles from 1 s to at most 30 s, with ±20% jitter', () => {
    expect([0, 1, 2, 3, 4, 5, 6].map((a) => backoffDelayMs(a, undefined, () => 0.5))).toEqual([
      1000, 2000, 4000, 8000, 16000, 30000, 30000,
    ])
    expect(backoffDelayMs(2, undefined, () => 0)).toBe(3200)
    expect(backoffDelayMs(2, undefined, () => 1)).toBe(4800)
  })

  it('waits at least what Retry-After says', () => {
    expect(backoffDelayMs(0, 7, () => 0.5)).toBe(7000)
    expect(backoffDelayMs(3, 1, () => 0.5)).toBe(8000)
  })
})

describe('withBackoff', () => {
  it('retries 429 and 503 with growing waits until another answer, and gives up after its attempts', async () => {
    const waits: number[] = []
    const sleep = async (ms: number) => {
      waits.push(ms)
    }
    const answers = [429, 503, 429, 200]
    const res = await withBackoff(async () => new Response(null, { status: answers.shift()! }), { sleep })
    expect(res.status).toBe(200)
    expect(waits.length).toBe(3)
    expect(waits[0]).toBeGreaterThanOrEqual(800)
    expect(waits[2]).toBeGreaterThanOrEqual(3200)

    const always = await withBackoff(
      async () => new Response(null, { status: 429, headers: { 'retry-after': '2' } }),
      {
        attempts: 3,
        sleep,
      },
    )
    expect(always.status).toBe(429)
    expect(waits.slice(3)).toEqual([expect.any(Number), expect.any(Number)])
    expect(waits[3]).toBeGreaterThanOrEqual(2000)
  })
})
