// legs: once — bun:sqlite's own behaviour, SQLite's alone
import { Database } from 'bun:sqlite'
import { describe, expect, it } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SqliteStore } from './sqlite'
import { isStoreUnavailable, StoreBusy } from './store'

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

describe('SqliteStore on a file another connection holds', () => {
  const file = async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-busy-'))
    const path = join(dir, 'busy.db')
    const s = new SqliteStore(path, { busyGiveUpMs: 600 })
    await s.exec('CREATE TABLE t (v TEXT NOT NULL)')
    // Another connection on the file: a job worker thread's, or a foreign process's.
    const other = new Database(path)
    return { s, other }
  }

  it('waits for the write lock off the thread and then commits, whoever held it', async () => {
    const { s, other } = await file()
    other.run('BEGIN IMMEDIATE')
    let ticks = 0
    const timer = setInterval(() => ticks++, 5)
    setTimeout(() => other.run('COMMIT'), 200)
    const started = performance.now()
    await s.tx(async (tx) => {
      await tx.exec("INSERT INTO t VALUES ('tx')")
    })
    await s.exec("INSERT INTO t VALUES ('autocommit')")
    clearInterval(timer)
    expect(performance.now() - started).toBeGreaterThanOrEqual(190)
    // The thread went on meanwhile: SQLite's own busy wait would have frozen it for the 200 ms (at
    // most one tick, after it). A 5 ms timer ticks ~40 times; a loaded 2-core host has given 8.
    expect(ticks).toBeGreaterThan(3)
    expect(await values(s)).toEqual(['autocommit', 'tx'])
  })

  it('tries an autocommit write again until the lock is free', async () => {
    const { s, other } = await file()
    other.run('BEGIN IMMEDIATE')
    setTimeout(() => other.run('COMMIT'), 150)
    expect(await s.exec("INSERT INTO t VALUES ('later')")).toBe(1)
    expect(await values(s)).toEqual(['later'])
  })

  it('gives up as StoreBusy (answered 503) when the lock is not had in time, and then works again', async () => {
    const { s, other } = await file()
    other.run('BEGIN IMMEDIATE')
    const failed = s.tx(async (tx) => {
      await tx.exec("INSERT INTO t VALUES ('never')")
    })
    await expect(failed).rejects.toBeInstanceOf(StoreBusy)
    expect(isStoreUnavailable(await failed.catch((e) => e))).toBe(true)
    await expect(s.exec("INSERT INTO t VALUES ('never')")).rejects.toBeInstanceOf(StoreBusy)
    other.run('ROLLBACK')
    // The turn was given back: the next transaction runs.
    await s.tx(async (tx) => {
      await tx.exec("INSERT INTO t VALUES ('after')")
    })
    expect(await values(s)).toEqual(['after'])
  })
})
