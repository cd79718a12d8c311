import { afterAll, describe, expect, it } from 'bun:test'
import { rmSync } from 'node:fs'
import { testCore } from '../../tests/support/core'
import { LoginThrottle, minutesText, type ThrottleEntry } from './throttle'

const core = testCore()
const throttle = new LoginThrottle(core)
afterAll(() => {
  core.db.$client.close()
  rmSync(core.config.dataDir, { recursive: true, force: true })
})

const rule = { limit: 3, windowMs: 10 * 60_000, lockMs: 15 * 60_000 }
let n = 0
const fresh = (): ThrottleEntry => [`test:${++n}`, rule]

describe('LoginThrottle', () => {
  it('grants at most `limit` slots while they are in flight, and locks once they fail', () => {
    const key = fresh()
    expect([1, 2, 3, 4].map(() => throttle.reserve([key]))).toEqual([0, 0, 0, rule.lockMs])
    throttle.fail([key])
    throttle.fail([key])
    // Two failed and one still in flight: still full, not locked yet.
    expect(throttle.reserve([key])).toBe(rule.lockMs)
    throttle.fail([key])
    core.clock.advance(5 * 60_000)
    expect(throttle.reserve([key])).toBe(10 * 60_000)
    core.clock.advance(10 * 60_000)
    expect(throttle.reserve([key])).toBe(0)
  })

  it('gives a released slot back: a success does not count as a failure', () => {
    const key = fresh()
    for (let i = 0; i < 3; i++) expect(throttle.reserve([key])).toBe(0)
    throttle.fail([key])
    throttle.fail([key])
    throttle.release([key]) // the third one succeeded
    expect(throttle.reserve([key])).toBe(0)
    expect(throttle.reserve([key])).toBe(rule.lockMs)
  })

  it('counts checks still in flight at the end of a window against the next one', () => {
    const key = fresh()
    for (let i = 0; i < 3; i++) expect(throttle.reserve([key])).toBe(0)
    core.clock.advance(rule.windowMs + 1)
    // Guesses sent just before and just after the edge are counted together.
    expect(throttle.reserve([key])).toBe(rule.lockMs)
    for (let i = 0; i < 3; i++) throttle.fail([key])
    expect(throttle.reserve([key])).toBe(rule.lockMs)
  })

  it('drops a pending count left by a process that died mid-check, two windows on', () => {
    const key = fresh()
    for (let i = 0; i < 3; i++) expect(throttle.reserve([key])).toBe(0)
    core.clock.advance(2 * rule.windowMs + 1)
    expect(throttle.reserve([key])).toBe(0)
  })

  it('starts a new window once the old one has passed', () => {
    const key = fresh()
    for (let i = 0; i < 2; i++) expect(throttle.reserve([key])).toBe(0)
    throttle.fail([key, key])
    expect(throttle.reserve([key])).toBe(0)
    throttle.release([key])
    core.clock.advance(rule.windowMs + 1)
    for (let i = 0; i < 3; i++) expect(throttle.reserve([key])).toBe(0)
  })

  it('keeps nothing reserved when a later key refuses', () => {
    const first = fresh()
    const full = fresh()
    for (let i = 0; i < 3; i++) throttle.reserve([full])
    expect(throttle.reserve([first, full])).toBe(rule.lockMs)
    for (let i = 0; i < 3; i++) expect(throttle.reserve([first])).toBe(0)
    expect(throttle.reserve([first])).toBe(rule.lockMs)
  })

  it('forgets a key on reset', () => {
    const key = fresh()
    for (let i = 0; i < 3; i++) throttle.reserve([key])
    throttle.fail([key])
    throttle.reset(key[0])
    expect(throttle.reserve([key])).toBe(0)
  })

  it('words the wait in whole minutes', () => {
    expect(minutesText(1)).toBe('1 minute')
    expect(minutesText(60_000)).toBe('1 minute')
    expect(minutesText(60_001)).toBe('2 minutes')
  })
})
