import { afterAll, describe, expect, it } from 'bun:test'
import { rmSync } from 'node:fs'
import { testCore } from '../../tests/support/core'
import { minutesText } from './attempts'
import { waitOf } from './decision'
import type { AttemptEntry } from './limiter'

// The attempt buckets (the sign-in throttle): store rows, so this runs on both stores.
const core = await testCore()
const { limiter } = core
/** The milliseconds a take says to wait (whole seconds), 0 when it was allowed. */
const throttle = {
  reserve: async (entries: AttemptEntry[]) => waitOf(await limiter.takeAll(entries)) * 1000,
  fail: (entries: AttemptEntry[]) => limiter.fail(entries),
  release: (entries: AttemptEntry[]) => limiter.release(entries),
}
afterAll(async () => {
  await core.store.close()
  rmSync(core.config.dataDir, { recursive: true, force: true })
})

const rule = { limit: 3, windowMs: 10 * 60_000, lockMs: 15 * 60_000 }
let n = 0
const fresh = (): AttemptEntry => ['signInAccount', `test:${++n}`, rule]

/** `times` reservations one after the other, and what each answered. */
async function reserveTimes(times: number, entries: AttemptEntry[]): Promise<number[]> {
  const waits: number[] = []
  for (let i = 0; i < times; i++) waits.push(await throttle.reserve(entries))
  return waits
}

describe('the attempt buckets', () => {
  it('grants at most `limit` slots while they are in flight, and locks once they fail', async () => {
    const key = fresh()
    expect(await reserveTimes(4, [key])).toEqual([0, 0, 0, rule.lockMs])
    await throttle.fail([key])
    await throttle.fail([key])
    // Two failed and one still in flight: still full, not locked yet.
    expect(await throttle.reserve([key])).toBe(rule.lockMs)
    await throttle.fail([key])
    core.clock.advance(5 * 60_000)
    expect(await throttle.reserve([key])).toBe(10 * 60_000)
    core.clock.advance(10 * 60_000)
    expect(await throttle.reserve([key])).toBe(0)
  })

  it('grants exactly `limit` slots to reservations made all at once', async () => {
    const key = fresh()
    const waits = await Promise.all(Array.from({ length: 12 }, () => throttle.reserve([key])))
    expect(waits.filter((w) => w === 0)).toHaveLength(rule.limit)
  })

  it('gives a released slot back: a success does not count as a failure', async () => {
    const key = fresh()
    expect(await reserveTimes(3, [key])).toEqual([0, 0, 0])
    await throttle.fail([key])
    await throttle.fail([key])
    await throttle.release([key]) // the third one succeeded
    expect(await throttle.reserve([key])).toBe(0)
    expect(await throttle.reserve([key])).toBe(rule.lockMs)
  })

  it('counts checks still in flight at the end of a window against the next one', async () => {
    const key = fresh()
    expect(await reserveTimes(3, [key])).toEqual([0, 0, 0])
    core.clock.advance(rule.windowMs + 1)
    // Guesses sent just before and just after the edge are counted together.
    expect(await throttle.reserve([key])).toBe(rule.lockMs)
    for (let i = 0; i < 3; i++) await throttle.fail([key])
    expect(await throttle.reserve([key])).toBe(rule.lockMs)
  })

  it('drops a pending count left by a process that died mid-check, two windows on', async () => {
    const key = fresh()
    expect(await reserveTimes(3, [key])).toEqual([0, 0, 0])
    core.clock.advance(2 * rule.windowMs + 1)
    expect(await throttle.reserve([key])).toBe(0)
  })

  it('starts a new window once the old one has passed', async () => {
    const key = fresh()
    expect(await reserveTimes(2, [key])).toEqual([0, 0])
    await throttle.fail([key, key])
    expect(await throttle.reserve([key])).toBe(0)
    await throttle.release([key])
    core.clock.advance(rule.windowMs + 1)
    expect(await reserveTimes(3, [key])).toEqual([0, 0, 0])
  })

  it('keeps nothing reserved when a later key refuses', async () => {
    const first = fresh()
    const full = fresh()
    await reserveTimes(3, [full])
    expect(await throttle.reserve([first, full])).toBe(rule.lockMs)
    expect(await reserveTimes(3, [first])).toEqual([0, 0, 0])
    expect(await throttle.reserve([first])).toBe(rule.lockMs)
  })

  it('forgets a key', async () => {
    const key = fresh()
    await reserveTimes(3, [key])
    await throttle.fail([key])
    await limiter.forget('signInAccount', key[1])
    expect(await throttle.reserve([key])).toBe(0)
  })

  it('words the wait in whole minutes', () => {
    expect(minutesText(1)).toBe('1 minute')
    expect(minutesText(60)).toBe('1 minute')
    expect(minutesText(61)).toBe('2 minutes')
  })
})
