import { describe, expect, it } from 'bun:test'
import { testCore } from '../../tests/support/core'
import { jobs } from '../queue/schema'
import { isUniqueViolation, loggable } from './store'

describe('loggable', () => {
  it("keeps a failed statement's parameters out of what is logged, and the driver's reason in", async () => {
    const core = await testCore()
    const row = {
      id: 'job_same',
      kind: 'k',
      payload: JSON.stringify({ password: 'hunter2-SECRET' }),
      runAt: 0,
      createdAt: 0,
      updatedAt: 0,
    }
    await core.db.insert(jobs).values(row)
    const failure = await core.db
      .insert(jobs)
      .values(row)
      .then(
        () => null,
        (e: unknown) => e,
      )
    expect(failure).toBeInstanceOf(Error)
    // What drizzle throws carries the statement and its parameters…
    expect(String((failure as Error).message)).toContain('hunter2-SECRET')
    expect(isUniqueViolation(failure)).toBe(true)
    // …what is logged does not.
    const logged = loggable(failure)
    expect(JSON.stringify(logged)).not.toContain('hunter2-SECRET')
    expect(logged.error).toMatch(/UNIQUE|unique|duplicate/)
    await core.store.close()
  })

  it('logs a plain error as its message and stack', () => {
    const e = new Error('boom')
    expect(loggable(e)).toEqual({ error: 'boom', stack: e.stack })
  })
})
