import { afterAll, describe, expect, it } from 'bun:test'
import { SQL } from 'bun'
import { createTestDatabase, testStore } from '../../tests/support/postgres'
import { PostgresStore } from './postgres'

const until = async (what: string, check: () => boolean, ms = 8000) => {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(20)
  }
}

describe.skipIf(testStore !== 'postgres')('PostgresStore cluster messages (PostgreSQL leg)', () => {
  const opened: { close(): Promise<void> }[] = []
  afterAll(async () => {
    for (const c of opened) await c.close()
  })

  it('delivers messages, and says when its listening connection was replaced (messages may be lost)', async () => {
    const url = await createTestDatabase()
    const store = new PostgresStore({ url, poolSize: 2 })
    const admin = new SQL({ url, max: 1 })
    opened.push(store, admin)
    const got: string[] = []
    let lost = 0
    await store.listen(
      'gatehouse_changes',
      (payload) => got.push(payload),
      () => lost++,
    )
    await store.notify('gatehouse_changes', 'ws-1')
    await until('the first message', () => got.includes('ws-1'))
    await Bun.sleep(1500)
    // Its checks went by (one a second): with the connection as it was, nothing was lost.
    expect(got).toEqual(['ws-1'])
    expect(lost).toBe(0)

    // Only the LISTEN connection dies (an idle-timeout on the way, a restarted pooler…).
    const killed = (await admin.unsafe(
      "SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%' AND pid <> pg_backend_pid()",
    )) as { ok: boolean }[]
    expect(killed.length).toBeGreaterThan(0)
    await until('the loss to be noticed', () => lost > 0)
    await store.notify('gatehouse_changes', 'ws-2')
    await until('messages after it', () => got.includes('ws-2'))
    expect(got).toEqual(['ws-1', 'ws-2'])
  }, 20_000)
})
