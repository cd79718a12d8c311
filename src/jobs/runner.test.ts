import { describe, expect, it } from 'bun:test'
import { eq } from 'drizzle-orm'
import { testCore } from '../../tests/support/core'
import { jobs } from '../queue/schema'
import { type JobHandler, JobRunner } from './runner'

const setup = (handlers: JobHandler<unknown>[], leaseMs = 30_000, workerId = 'w-test') => {
  const core = testCore()
  const runner = new JobRunner(core.db, core.clock, core.log, {}, handlers, {
    workerId,
    leaseMs,
    concurrency: 4,
  })
  const row = (id: string) => core.db.select().from(jobs).where(eq(jobs.id, id)).get()!
  return { core, runner, row }
}

describe('JobRunner', () => {
  it('runs a due job once and marks it done', async () => {
    const seen: unknown[] = []
    const { core, runner, row } = setup([{ kind: 'greet', run: (p) => void seen.push(p) }])
    const id = core.jobs.enqueue('greet', { name: 'Ada' })
    await runner.drain()
    await runner.drain()
    expect(seen).toEqual([{ name: 'Ada' }])
    expect(row(id)).toMatchObject({ status: 'done', attempts: 1, leaseUntil: null })
  })

  it('does not run a job before its runAt', async () => {
    let runs = 0
    const { core, runner, row } = setup([{ kind: 'later', run: () => void runs++ }])
    const id = core.jobs.enqueue('later', null, { runAt: core.clock.now() + 60_000 })
    await runner.drain()
    expect(runs).toBe(0)
    core.clock.advance(60_000)
    await runner.drain()
    expect(runs).toBe(1)
    expect(row(id).status).toBe('done')
  })

  it('retries a failing job with growing backoff, then gives up as dead', async () => {
    let runs = 0
    const { core, runner, row } = setup([
      {
        kind: 'flaky',
        run: () => {
          runs++
          throw new Error(`boom ${runs}`)
        },
        backoffMs: (attempt) => attempt * 1000,
      },
    ])
    const id = core.jobs.enqueue('flaky', {}, { maxAttempts: 3 })
    await runner.drain()
    expect(row(id)).toMatchObject({ status: 'queued', attempts: 1, lastError: 'boom 1' })
    expect(row(id).runAt).toBe(core.clock.now() + 1000)
    await runner.drain() // not due yet
    expect(runs).toBe(1)
    core.clock.advance(1000)
    await runner.drain()
    expect(row(id)).toMatchObject({ status: 'queued', attempts: 2 })
    expect(row(id).runAt).toBe(core.clock.now() + 2000)
    core.clock.advance(2000)
    await runner.drain()
    expect(row(id)).toMatchObject({ status: 'dead', attempts: 3, lastError: 'boom 3' })
    core.clock.advance(3_600_000)
    await runner.drain()
    expect(runs).toBe(3)
  })

  it('succeeds on a later attempt', async () => {
    let runs = 0
    const { core, runner, row } = setup([
      {
        kind: 'second-time-lucky',
        run: () => {
          if (++runs === 1) throw new Error('transient')
        },
      },
    ])
    const id = core.jobs.enqueue('second-time-lucky', {})
    await runner.drain()
    core.clock.advance(5_000) // default backoff after the first failure
    await runner.drain()
    expect(row(id)).toMatchObject({ status: 'done', attempts: 2, lastError: null })
  })

  it('reclaims a job whose lease expired (its worker died) and runs it again', async () => {
    const { core, row } = setup([])
    const ran: string[] = []
    const handler = { kind: 'work', run: () => void ran.push('b') }
    // Worker A claims the job and dies without finishing: simulate by a claim that never completes.
    const dead = new JobRunner(
      core.db,
      core.clock,
      core.log,
      {},
      [{ kind: 'work', run: () => new Promise(() => {}) }],
      {
        workerId: 'A',
        leaseMs: 10_000,
        concurrency: 1,
      },
    )
    const id = core.jobs.enqueue('work', {})
    void dead.drain()
    expect(row(id)).toMatchObject({ status: 'running', lockedBy: 'A' })
    const b = new JobRunner(core.db, core.clock, core.log, {}, [handler], {
      workerId: 'B',
      leaseMs: 10_000,
      concurrency: 1,
    })
    await b.drain()
    expect(ran).toEqual([]) // lease still held
    core.clock.advance(10_001)
    await b.drain()
    expect(ran).toEqual(['b'])
    expect(row(id)).toMatchObject({ status: 'done', lockedBy: 'B', attempts: 2 })
  })

  it('marks a job of an unknown kind dead instead of looping', async () => {
    const { core, runner, row } = setup([])
    const id = core.jobs.enqueue('no-such-kind', {})
    await runner.drain()
    expect(row(id)).toMatchObject({ status: 'dead', lastError: 'unknown job kind no-such-kind' })
  })

  it('runs up to `concurrency` jobs at once', async () => {
    let active = 0
    let peak = 0
    const { core, runner } = setup([
      {
        kind: 'slow',
        run: async () => {
          peak = Math.max(peak, ++active)
          await Bun.sleep(5)
          active--
        },
      },
    ])
    for (let i = 0; i < 10; i++) core.jobs.enqueue('slow', { i })
    await runner.drain()
    expect(peak).toBe(4)
  })

  it('enqueues inside a transaction: a rollback loses the job, a commit keeps it', () => {
    const { core } = setup([])
    expect(() =>
      core.db.transaction((tx) => {
        core.jobs.enqueue('x', {}, { tx })
        throw new Error('rollback')
      }),
    ).toThrow()
    expect(core.db.select().from(jobs).all()).toHaveLength(0)
    core.db.transaction((tx) => {
      core.jobs.enqueue('x', {}, { tx })
    })
    expect(core.db.select().from(jobs).all()).toHaveLength(1)
  })
})
