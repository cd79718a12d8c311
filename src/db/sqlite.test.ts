import { describe, expect, it } from 'bun:test'
import { SqliteStore } from './sqlite'

const store = async () => {
  const s = new SqliteStore(':memory:')
  await s.exec('CREATE TABLE t (v TEXT NOT NULL)')
  return s
}
const values = async (s: SqliteStore) =>
  (await s.query<{ v: string }>('SELECT v FROM t ORDER BY v')).map((r) => r.v)

describe('SqliteStore transactions', () => {
  it('runs a statement from outside an open transaction after it, never inside the next one', async () => {
    const s = await store()
    const a = s.tx(async (tx) => {
      await tx.exec("INSERT INTO t VALUES ('a')")
      await Bun.sleep(20)
    })
    await Bun.sleep(5)
    // Waits for A; then B starts at once and rolls back: the outside write must survive it.
    const outside = s.exec("INSERT INTO t VALUES ('outside')")
    const b = s.tx(async (tx) => {
      await tx.exec("INSERT INTO t VALUES ('b')")
      throw new Error('rollback')
    })
    await a
    expect(await outside).toBe(1)
    await expect(b).rejects.toThrow('rollback')
    expect(await values(s)).toEqual(['a', 'outside'])
  })

  it('keeps an outside read from seeing a transaction it is not part of: it waits for the commit', async () => {
    const s = await store()
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const t = s.tx(async (tx) => {
      await tx.exec("INSERT INTO t VALUES ('uncommitted')")
      await gate
    })
    await Bun.sleep(5)
    let settled = false
    const read = values(s).then((v) => {
      settled = true
      return v
    })
    await Bun.sleep(10)
    expect(settled).toBe(false)
    release()
    await t
    expect(await read).toEqual(['uncommitted'])
  })

  it('runs afterCommit callbacks after the commit and outside it: they may open a transaction', async () => {
    const s = await store()
    const done = new Promise<void>((resolve) => {
      void s.tx(async (tx) => {
        await tx.exec("INSERT INTO t VALUES ('first')")
        tx.afterCommit(() => {
          void s
            .tx(async (next) => {
              await next.exec("INSERT INTO t VALUES ('then')")
            })
            .then(resolve)
        })
      })
    })
    await done
    expect(await values(s)).toEqual(['first', 'then'])
  })

  it('drops afterCommit callbacks of a rolled back transaction', async () => {
    const s = await store()
    let ran = false
    await expect(
      s.tx(async (tx) => {
        tx.afterCommit(() => {
          ran = true
        })
        throw new Error('no')
      }),
    ).rejects.toThrow('no')
    await Bun.sleep(0)
    expect(ran).toBe(false)
  })

  it('refuses a transaction opened inside another (pass its Conn down instead)', async () => {
    const s = await store()
    await expect(s.tx(() => s.tx(async () => {}))).rejects.toThrow('already open')
  })
})
