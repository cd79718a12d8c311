import { describe, expect, it } from 'bun:test'
import { testCore } from '../../tests/support/core'
import { jobs } from '../queue/schema'
import { inStrings, listParam, listSize } from './in-strings'

describe('inStrings', () => {
  it('finds the rows of one id or of many, and none for an empty list or a lookalike, on this store', async () => {
    const core = await testCore()
    const ids = ['job_a', 'job_b', 'job_c', 'job_"quoted"']
    await core.db
      .insert(jobs)
      .values(ids.map((id) => ({ id, kind: 'k', payload: '{}', runAt: 0, createdAt: 0, updatedAt: 0 })))
    const read = async (wanted: string[]) => {
      const size = listSize(wanted)
      const text = `SELECT id FROM jobs WHERE ${inStrings(core.store.dialect, 'id', '$1', size)}`
      const rows = await core.store.query<{ id: string }>(text, [listParam(wanted, size)])
      return rows.map((r) => r.id).sort()
    }
    expect(listSize(['job_a'])).toBe('one')
    expect(listParam(['job_a'], 'one')).toBe('job_a')
    expect(await read(['job_a'])).toEqual(['job_a'])
    // A JSON text given as the one id is that text, not a list.
    expect(await read(['["job_a","job_b"]'])).toEqual([])
    expect(await read(['job_"quoted"'])).toEqual(['job_"quoted"'])
    expect(await read(['job_c', 'job_a', 'job_missing'])).toEqual(['job_a', 'job_c'])
    expect(await read(['job_"quoted"', 'job_b'])).toEqual(['job_"quoted"', 'job_b'])
    expect(await read([])).toEqual([])
    await core.store.close()
  })
})
