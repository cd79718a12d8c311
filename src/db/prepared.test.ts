import { describe, expect, it } from 'bun:test'
import { eq, sql } from 'drizzle-orm'
import { testCore } from '../../tests/support/core'
import { jobs } from '../queue/schema'
import { preparedRead } from './prepared'
import type { Db } from './store'

describe('preparedRead', () => {
  it('builds a read once per handle and runs it with each call’s values', async () => {
    const [one, other] = [await testCore(), await testCore()]
    const built: Db[] = []
    const byId = preparedRead((db) => {
      built.push(db)
      return db
        .select({ id: jobs.id, kind: jobs.kind })
        .from(jobs)
        .where(eq(jobs.id, sql.placeholder('id')))
        .prepare('test_job_by_id')
    })
    const row = (id: string, kind: string) => ({
      id,
      kind,
      payload: '{}',
      runAt: 0,
      createdAt: 0,
      updatedAt: 0,
    })
    await one.db.insert(jobs).values([row('job_a', 'first'), row('job_b', 'second')])
    await other.db.insert(jobs).values(row('job_a', 'elsewhere'))

    expect(await byId(one.db).execute({ id: 'job_a' })).toEqual([{ id: 'job_a', kind: 'first' }])
    expect(await byId(one.db).execute({ id: 'job_b' })).toEqual([{ id: 'job_b', kind: 'second' }])
    expect(await byId(one.db).execute({ id: 'job_none' })).toEqual([])
    // Another store (another thread's, another node's) has its own, on its own rows.
    expect(await byId(other.db).execute({ id: 'job_a' })).toEqual([{ id: 'job_a', kind: 'elsewhere' }])
    expect(built).toEqual([one.db, other.db])
    await Promise.all([one.store.close(), other.store.close()])
  })
})
