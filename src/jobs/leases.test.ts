import { describe, expect, it } from 'bun:test'
import { eq } from 'drizzle-orm'
import { testCore } from '../../tests/support/core'
import { jobs } from '../queue/schema'
import { leaseOwner, newBootId, requeueEarlierBootJobs } from './leases'

describe('requeueEarlierBootJobs', () => {
  it("requeues only the running jobs of this node's earlier boots", () => {
    const core = testCore()
    const lease = core.clock.now() + 60_000
    const running = (lockedBy: string) => {
      const id = core.jobs.enqueue('any', null)
      core.db
        .update(jobs)
        .set({ status: 'running', attempts: 1, lockedBy, leaseUntil: lease })
        .where(eq(jobs.id, id))
        .run()
      return id
    }
    const row = (id: string) => core.db.select().from(jobs).where(eq(jobs.id, id)).get()!
    const [earlier, current] = [newBootId(), newBootId()]
    const killed = running(leaseOwner('node-a', earlier, 'w0'))
    const mine = running(leaseOwner('node-a', current, 'w0'))
    const otherNode = running(leaseOwner('node-b', earlier, 'w0'))
    const longerName = running(leaseOwner('node-a2', earlier, 'w0'))
    const legacy = running('w0_01JZZZZZZZZZZZZZZZZZZZZZZZ')
    const done = running(leaseOwner('node-a', earlier, 'w1'))
    core.db.update(jobs).set({ status: 'done' }).where(eq(jobs.id, done)).run()

    expect(requeueEarlierBootJobs(core.db, core.clock, 'node-a', current)).toBe(1)
    expect(row(killed)).toMatchObject({ status: 'queued', attempts: 1, lockedBy: null, leaseUntil: null })
    expect(row(killed).lastError).toContain('interrupted')
    for (const id of [mine, otherNode, longerName, legacy]) {
      expect(row(id)).toMatchObject({ status: 'running', leaseUntil: lease })
    }
    expect(row(done).status).toBe('done')
  })
})
