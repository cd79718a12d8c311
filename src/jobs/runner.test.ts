import { describe, expect, it } from 'bun:test'
import { eq } from 'drizzle-orm'
import { testCore } from '../../tests/support/core'
import type { Conn } from '../db/store'
import { jobs } from '../queue/schema'
import { type JobHandler, JobRunner } from './runner'

const setup = async (handlers: JobHandler<unknown>[], leaseMs = 30_000, workerId = 'w-test') => {
  const core = await testCore()
  const runner = new JobRunner(core.store, core.clock, core.log, {}, handlers, {
    workerId,
    leaseMs,
    concurrency: 4,
  })
  const row = async (id: string) => (await core.db.select().from(jobs).where(eq(jobs.id, id)))[0]!
  return { core, runner, row }
}

describe('JobRunner', () => {
  it('runs a due job once and marks it done', async () => {
    const seen: unknown[] = []
    const { core, runner, row } = await setup([{ kind: 'greet', run: (p) => void seen.push(p) }])
    const id = await core.jobs.enqueue('greet', { name: 'Ada' })
    await runner.drain()
    await runner.drain()
    expect(seen).toEqual([{ name: 'Ada' }])
    expect(await row(id)).toMatchObject({ status: 'done', attempts: 1, leaseUntil: null })
  })

  it('does not run a job before its runAt', async () => {
    let runs = 0
    const { core, runner, row } = await setup([{ kind: 'later', run: () => void runs++ }])
    const id = await core.jobs.enqueue('later', null, { runAt: core.clock.now() + 60_000 })
    await runner.drain()
    expect(runs).toBe(0)
    core.clock.advance(60_000)
    await runner.drain()
    expect(runs).toBe(1)
    expect((await row(id)).status).toBe('done')
  })

  it('retries a failing job with growing backoff, then gives up as dead', async () => {
    let runs = 0
    const { core, runner, row } = await setup([
      {
        kind: 'flaky',
        run: () => {
          runs++
          throw new Error(`boom ${runs}`)
        },
        backoffMs: (attempt) => attempt * 1000,
      },
    ])
    const id = await core.jobs.enqueue('flaky', {}, { maxAttempts: 3 })
    await runner.drain()
    expect(await row(id)).toMatchObject({ status: 'queued', attempts: 1, lastError: 'boom 1' })
    expect((await row(id)).runAt).toBe(core.clock.now() + 1000)
    await runner.drain() // not due yet
    expect(runs).toBe(1)
    core.clock.advance(1000)
    await runner.drain()
    expect(await row(id)).toMatchObject({ status: 'queued', attempts: 2 })
    expect((await row(id)).runAt).toBe(core.clock.now() + 2000)
    core.clock.advance(2000)
    await runner.drain()
    expect(await row(id)).toMatchObject({ status: 'dead', attempts: 3, lastError: 'boom 3' })
    core.clock.advance(3_600_000)
    await runner.drain()
    expect(runs).toBe(3)
  })

  it('succeeds on a later attempt', async () => {
    let runs = 0
    const { core, runner, row } = await setup([
      {
        kind: 'second-time-lucky',
        run: () => {
          if (++runs === 1) throw new Error('transient')
        },
      },
    ])
    const id = await core.jobs.enqueue('second-time-lucky', {})
    await runner.drain()
    core.clock.advance(5_000) // default backoff after the first failure
    await runner.drain()
    expect(await row(id)).toMatchObject({ status: 'done', attempts: 2, lastError: null })
  })

  it('reclaims a job whose lease expired (its worker died) and runs it again', async () => {
    const { core, row } = await setup([])
    const ran: string[] = []
    const handler = { kind: 'work', run: () => void ran.push('b') }
    // Worker A claims the job and dies without finishing: simulate by a claim that never completes.
    const dead = new JobRunner(
      core.store,
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
    const id = await core.jobs.enqueue('work', {})
    void dead.drain()
    // The claim is a query awaited inside drain(): give A the moment to take the job.
    for (let i = 0; i < 200 && (await row(id)).status !== 'running'; i++) await Bun.sleep(5)
    expect(await row(id)).toMatchObject({ status: 'running', lockedBy: 'A' })
    const b = new JobRunner(core.store, core.clock, core.log, {}, [handler], {
      workerId: 'B',
      leaseMs: 10_000,
      concurrency: 1,
    })
    await b.drain()
    expect(ran).toEqual([]) // lease still held
    core.clock.advance(10_001)
    await b.drain()
    expect(ran).toEqual(['b'])
    expect(await row(id)).toMatchObject({ status: 'done', lockedBy: 'B', attempts: 2 })
  })

  it('gives up on a job whose runs keep stopping mid-way once its attempts are spent', async () => {
    const { core, row } = await setup([])
    const id = await core.jobs.enqueue('crashy', {}, { maxAttempts: 2 })
    const ran: string[] = []
    // Each runner takes the job and "dies" with it (never finishes); the next one reclaims it.
    for (const worker of ['A', 'B']) {
      const r = new JobRunner(
        core.store,
        core.clock,
        core.log,
        {},
        [{ kind: 'crashy', run: () => new Promise(() => {}) }],
        {
          workerId: worker,
          leaseMs: 1_000,
          concurrency: 1,
        },
      )
      void r.drain()
      for (let i = 0; i < 200 && (await row(id)).lockedBy !== worker; i++) await Bun.sleep(5)
      core.clock.advance(1_001)
    }
    const c = new JobRunner(
      core.store,
      core.clock,
      core.log,
      {},
      [{ kind: 'crashy', run: () => void ran.push('C') }],
      {
        workerId: 'C',
        leaseMs: 1_000,
        concurrency: 1,
      },
    )
    await c.drain()
    expect(ran).toEqual([])
    expect(await row(id)).toMatchObject({ status: 'dead', attempts: 3 })
  })

  it('marks a job of an unknown kind dead instead of looping', async () => {
    const { core, runner, row } = await setup([])
    const id = await core.jobs.enqueue('no-such-kind', {})
    await runner.drain()
    expect(await row(id)).toMatchObject({ status: 'dead', lastError: 'unknown job kind no-such-kind' })
  })

  it('runs up to `concurrency` jobs at once', async () => {
    let active = 0
    let peak = 0
    const { core, runner } = await setup([
      {
        kind: 'slow',
        run: async () => {
          peak = Math.max(peak, ++active)
          await Bun.sleep(5)
          active--
        },
      },
    ])
    for (let i = 0; i < 10; i++) await core.jobs.enqueue('slow', { i })
    await runner.drain()
    expect(peak).toBe(4)
  })

  it('starts a job enqueued while a slow one runs, in a free slot, without waiting for the slow one', async () => {
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    const ran: string[] = []
    const { core, runner, row } = await setup([
      { kind: 'slow', run: () => held },
      { kind: 'quick', run: () => void ran.push('quick') },
    ])
    await core.jobs.enqueue('slow', {})
    const first = runner.drain()
    await Bun.sleep(10)
    const quick = await core.jobs.enqueue('quick', {})
    // What an enqueue's wake-up does: the pass in progress claims again.
    void runner.drain()
    const deadline = Date.now() + 2000
    while ((await row(quick)).status !== 'done' && Date.now() < deadline) await Bun.sleep(5)
    expect(ran).toEqual(['quick'])
    expect((await row(quick)).status).toBe('done')
    expect(await row((await core.db.select().from(jobs).where(eq(jobs.kind, 'slow')))[0]!.id)).toMatchObject({
      status: 'running',
    })
    release()
    await first
  })

  it('records a finished job as done when the store is busy for a moment, instead of leaving it to run again', async () => {
    const core = await testCore()
    let busy = 2
    const store: Conn = {
      ...core.store,
      query: (text, params) => core.store.query(text, params),
      exec: async (text, params) => {
        if (text.includes("status = 'done'") && busy-- > 0) throw new Error('database is locked')
        return core.store.exec(text, params)
      },
    }
    let runs = 0
    const runner = new JobRunner(
      store,
      core.clock,
      core.log,
      {},
      [{ kind: 'once', run: () => void runs++ }],
      {
        workerId: 'w-busy',
        leaseMs: 30_000,
        concurrency: 1,
      },
    )
    const id = await core.jobs.enqueue('once', {})
    await runner.drain()
    const [row] = await core.db.select().from(jobs).where(eq(jobs.id, id))
    expect({ runs, status: row?.status, attempts: row?.attempts }).toEqual({
      runs: 1,
      status: 'done',
      attempts: 1,
    })
  })

  it('enqueues inside a transaction: a rollback loses the job, a commit keeps it', async () => {
    const { core } = await setup([])
    await expect(
      core.store.tx(async (tx) => {
        await core.jobs.enqueue('x', {}, { tx })
        throw new Error('rollback')
      }),
    ).rejects.toThrow('rollback')
    expect(await core.db.select().from(jobs)).toHaveLength(0)
    await core.store.tx(async (tx) => {
      await core.jobs.enqueue('x', {}, { tx })
    })
    expect(await core.db.select().from(jobs)).toHaveLength(1)
  })
})
