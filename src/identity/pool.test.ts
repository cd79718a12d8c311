import { describe, expect, it } from 'bun:test'
import type { Core } from '../core'
import { DEFAULT_LOGIN_POLICY } from './policy'
import { InstancePool } from './pool'

const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`

describe('instance pool', () => {
  it('remembers `active` answers of the instances asked lately, not of every instance ever asked', async () => {
    const asked: string[] = []
    const core = { clock: { now: () => 1_000_000 } } as unknown as Core
    const pool = new InstancePool(
      core,
      () => {
        throw new Error('no instance is loaded here')
      },
      { callback: () => () => {} } as never,
      async (id: string) => {
        asked.push(id)
        return true
      },
      async () => ({ policy: { ...DEFAULT_LOGIN_POLICY }, idps: [], brand: null }),
    )
    // 20,000 answers fill the memo; none has expired (the clock stands still).
    for (let i = 0; i < 20_000; i++) expect(await pool.isServing(uuid(i))).toBe(true)
    expect(asked).toHaveLength(20_000)
    await pool.isServing(uuid(0))
    expect(asked).toHaveLength(20_000)
    // One more: the oldest tenth goes, and is asked again; the newest is still remembered.
    await pool.isServing(uuid(20_000))
    await pool.isServing(uuid(19_999))
    expect(asked).toHaveLength(20_001)
    await pool.isServing(uuid(0))
    expect(asked).toHaveLength(20_002)
  })
})
