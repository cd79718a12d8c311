import { Database } from 'bun:sqlite'
import { AsyncLocalStorage } from 'node:async_hooks'
import { chmodSync, closeSync, existsSync, openSync } from 'node:fs'
import { drizzle } from 'drizzle-orm/sqlite-proxy'
import { type Conn, type Db, type Params, type Store, StoreBusy } from './store'

/**
 * The store holds password hashes and sealed keys: readable by its owner only. SQLite gives its
 * -wal and -shm files the mode of the database file; those left by an older version are tightened too.
 */
function restrictFiles(path: string): void {
  if (path === ':memory:') return
  if (!existsSync(path)) closeSync(openSync(path, 'a', 0o600))
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    if (existsSync(file)) chmodSync(file, 0o600)
  }
}

/** `$1…$n` → SQLite's `?1…?n` (bound by position); a statement's text is converted once. */
const converted = new Map<string, string>()
function sqliteText(text: string): string {
  let out = converted.get(text)
  if (out === undefined) {
    out = text.replace(/\$(\d+)/g, '?$1')
    if (converted.size < 1000) converted.set(text, out)
  }
  return out
}

/**
 * How long SQLite's own busy handler may block this thread for one try (it sleeps synchronously, and
 * on the main thread that is every request's wait), and how long a statement or a transaction's
 * BEGIN keeps trying in all, each try after an async pause, before it gives up as StoreBusy (503).
 */
const BUSY_TRY_MS = 20
const BUSY_GIVE_UP_MS = 15_000

const isBusy = (e: unknown): boolean => {
  const code = (e as { code?: unknown } | null)?.code
  return code === 'SQLITE_BUSY' || code === 'SQLITE_BUSY_SNAPSHOT' || code === 'SQLITE_LOCKED'
}

/**
 * The pause before trying a statement or a BEGIN refused as busy once more (1, 2, 4 … 64 ms,
 * jittered), off the thread; StoreBusy once `giveUpMs` have passed since the first try. A
 * refused statement did nothing, so trying it again is safe. The other connections on this file are
 * this process's own (the main thread and the job workers), whose transactions touch only the store
 * and end in milliseconds: the bound is for a foreign process holding the file (the sqlite3 shell).
 */
async function pauseWhileBusy(e: unknown, startedAt: number, tries: number, giveUpMs: number): Promise<void> {
  if (!isBusy(e)) throw e
  const waited = performance.now() - startedAt
  if (waited >= giveUpMs) throw new StoreBusy(e, waited)
  const pause = Math.min(64, 2 ** tries) * (0.5 + Math.random())
  await new Promise((resolve) => setTimeout(resolve, pause))
}

/**
 * SQLite through bun:sqlite, one connection per thread. Queries run synchronously underneath, but
 * through drizzle's async driver, so code awaits them as it awaits PostgreSQL's.
 *
 * A transaction spans awaits, and other requests' queries on this connection could land inside it
 * (and vanish with its rollback). So while one is open, a query from outside it (told apart by
 * AsyncLocalStorage) waits for it to end; transactions take turns.
 */
export class SqliteStore implements Store {
  readonly dialect = 'sqlite' as const
  readonly db: Db
  private readonly client: Database
  private readonly inTx = new AsyncLocalStorage<object>()
  private open: { token: object; done: Promise<void> } | null = null
  private turn: Promise<void> = Promise.resolve()

  /** How long a statement or BEGIN refused as busy keeps trying before StoreBusy (tests shorten it). */
  private readonly busyGiveUpMs: number

  constructor(path: string, opts: { busyGiveUpMs?: number } = {}) {
    this.busyGiveUpMs = opts.busyGiveUpMs ?? BUSY_GIVE_UP_MS
    restrictFiles(path)
    const client = new Database(path, { create: true, strict: true })
    // First: switching to WAL takes a lock, and another connection (a worker thread, another
    // process) may hold one while it migrates; without a timeout that is SQLITE_BUSY at once.
    client.exec('PRAGMA busy_timeout = 5000')
    client.exec('PRAGMA journal_mode = WAL')
    client.exec('PRAGMA synchronous = NORMAL')
    client.exec('PRAGMA foreign_keys = ON')
    // From here on a busy file is waited for in pauseWhileBusy, off the thread.
    client.exec(`PRAGMA busy_timeout = ${BUSY_TRY_MS}`)
    this.client = client
    this.db = drizzle(async (text, params, method) => {
      // query() keeps the compiled statement for the next call with the same text.
      const stmt = client.query(text)
      if (method === 'run') {
        await this.statement(() => stmt.run(...(params as never[])))
        return { rows: [] }
      }
      const rows = (await this.statement(() => stmt.values(...(params as never[])))) as unknown[][]
      return { rows: method === 'get' ? (rows[0] as never) : rows }
    }) as unknown as Db
  }

  /**
   * Runs one statement once no transaction of another caller is open: checked and run with no await
   * in between (see outside()). Outside a transaction a statement refused as busy is tried again;
   * inside one, this connection already holds the write lock.
   */
  private async statement<T>(run: () => T): Promise<T> {
    const startedAt = performance.now()
    for (let tries = 0; ; tries++) {
      for (let open = this.outside(); open; open = this.outside()) await open
      try {
        return run()
      } catch (e) {
        if (this.open) throw e
        await pauseWhileBusy(e, startedAt, tries, this.busyGiveUpMs)
      }
    }
  }

  /**
   * The end of the transaction a statement must wait for: one is open and the caller is not inside
   * it. A caller loops until none, then runs its statement in the same synchronous step: a next
   * transaction may begin at any await, so the check and the statement must not be split by one.
   */
  private outside(): Promise<void> | null {
    const open = this.open
    return open && this.inTx.getStore() !== open.token ? open.done : null
  }

  query<T = Record<string, unknown>>(text: string, params: Params = []): Promise<T[]> {
    const stmt = this.client.query(sqliteText(text))
    return this.statement(() => stmt.all(...(params as never[])) as T[])
  }

  exec(text: string, params: Params = []): Promise<number> {
    const stmt = this.client.query(sqliteText(text))
    return this.statement(() => stmt.run(...(params as never[])).changes)
  }

  async serialize(_key: string): Promise<void> {}

  afterCommit(fn: () => void): void {
    queueMicrotask(fn)
  }

  async tx<T>(fn: (tx: Conn) => Promise<T>): Promise<T> {
    // Only from inside the open one (work a finished transaction started keeps its context: fine).
    if (this.open && this.inTx.getStore() === this.open.token)
      throw new Error('a transaction is already open here: pass its Conn down')
    const previous = this.turn
    let next!: () => void
    this.turn = new Promise((resolve) => {
      next = resolve
    })
    await previous
    try {
      // IMMEDIATE: take the write lock now, not at the first write (no upgrade deadlock). While
      // another thread holds it, this thread's other statements go on meanwhile.
      const startedAt = performance.now()
      for (let tries = 0; ; tries++) {
        try {
          this.client.run('BEGIN IMMEDIATE')
          break
        } catch (e) {
          await pauseWhileBusy(e, startedAt, tries, this.busyGiveUpMs)
        }
      }
    } catch (e) {
      next()
      throw e
    }
    // From BEGIN to here, no await: no other statement of this thread slipped inside.
    const token = {}
    let ended!: () => void
    this.open = { token, done: new Promise((resolve) => (ended = resolve)) }
    const committed: (() => void)[] = []
    let commit = false
    try {
      const tx: Conn = {
        dialect: this.dialect,
        db: this.db,
        query: (text, params) => this.query(text, params),
        exec: (text, params) => this.exec(text, params),
        serialize: (key) => this.serialize(key),
        afterCommit: (fn) => committed.push(fn),
      }
      return await this.inTx.run(token, async () => {
        try {
          const result = await fn(tx)
          this.client.run('COMMIT')
          commit = true
          return result
        } catch (e) {
          if (this.client.inTransaction) this.client.run('ROLLBACK')
          throw e
        }
      })
    } finally {
      this.open = null
      ended()
      next()
      // Outside the transaction's context: what they start is not part of it.
      if (commit)
        this.inTx.exit(() => {
          for (const then of committed) queueMicrotask(then)
        })
    }
  }

  async ping(): Promise<void> {
    this.client.query('SELECT 1').get()
  }

  async listen(): Promise<void> {}

  /** One node: the serve lock keeps a second process off this file. */
  async liveNodes(): Promise<number> {
    return 1
  }

  async notify(): Promise<void> {}

  async close(): Promise<void> {
    this.client.close()
  }

  /** The connection itself, for the SQLite-only tools (`store copy` reads it). */
  get raw(): Database {
    return this.client
  }
}
