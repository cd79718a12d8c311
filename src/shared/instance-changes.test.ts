// legs: once — unit test; no store
import { describe, expect, it } from 'bun:test'
import { InstanceChanges } from './instance-changes'

const sqlite = { dialect: 'sqlite' as const, notify: async () => {}, listen: async () => {} }

/** The changes a listening end hears within `ms`. */
async function heard(listener: InstanceChanges, ms = 200): Promise<(string | null)[]> {
  const got: (string | null)[] = []
  listener.subscribe((id) => got.push(id))
  await listener.listen()
  await Bun.sleep(ms)
  return got
}

describe('instance changes on SQLite', () => {
  it("reach the listening thread from another end of the same store's channel, not another store's", async () => {
    const main = new InstanceChanges(sqlite, '/data/a')
    const worker = new InstanceChanges(sqlite, '/data/a')
    const otherServer = new InstanceChanges(sqlite, '/data/b')
    const listening = heard(main)
    await Bun.sleep(10)
    await worker.changed('ws-1')
    await otherServer.changed('ws-2')
    expect(await listening).toEqual(['ws-1'])
    for (const end of [main, worker, otherServer]) end.close()
  })

  it('tell the writing end’s own listeners at once, and only once', async () => {
    const main = new InstanceChanges(sqlite, '/data/c')
    const got: (string | null)[] = []
    main.subscribe((id) => got.push(id))
    await main.listen()
    await main.changed('ws-3')
    await Bun.sleep(50)
    expect(got).toEqual(['ws-3'])
    main.close()
  })
})
