import { describe, expect, it } from 'bun:test'
import { eq } from 'drizzle-orm'
import { testCore } from '../../tests/support/core'
import { jobs } from '../queue/schema'
import { leaseOwner, newBootId, requeueEarlierBootJobs } from './leases'

describe('requeueEarlierBootJobs', () => {
  it("requeues only the running jobs of this node's earlier boots", async () => {
    const core = await testCore()
    const lease = core.clock.now() + 60_000
    const running = async (lockedBy: string) => {
      const id = await core.jobs.enqueue('any', null)
      await core.db
        .update(jobs)
        .set({ status: 'running', attempts: 1, lockedBy, leaseUntil: lease })
        .where(eq(jobs.id, id))
      return id
    }
    const row = async (id: string) => (await core.db.select().from(jobs).where(eq(jobs.id, id)))[0]!
    const [earlier, current] = [newBootId(), newBootId()]
    const killed = await running(leaseOwner('node-a', earlier, 'w0'))
    const mine = await running(leaseOwner('node-a', current, 'w0'))
    const otherNode = await running(leaseOwner('node-b', earlier, 'w0'))
    const longerName = await running(leaseOwner('node-a2', earlier, 'w0'))
    const legacy = await running('w0_01JZZZZZZZZZZZZZZZZZZZZZZZ')
    const done = await running(leaseOwner('node-a', earlier, 'w1'))
    await core.db.update(jobs).set({ status: 'done' }).where(eq(jobs.id, done))

    expect(await requeueEarlierBootJobs(core.db, core.clock, 'node-a', current)).toBe(1)
    expect(await row(killed)).toMatchObject({
      status: 'queued',
      attempts: 1,
      lockedBy: null,
      leaseUntil: null,
    })
    expect((await row(killed)).lastError).toContain('interrupted')
    for (const id of [mine, otherNode, longerName, legacy]) {
      expect(await row(id)).toMatchObject({ status: 'running', leaseUntil: lease })
    }
    expect((await row(done)).status).toBe('done')
  })
})
