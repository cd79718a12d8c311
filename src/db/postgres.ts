import { SQL } from 'bun'
import { drizzle } from 'drizzle-orm/bun-sql'
import { type Conn, type Db, isStoreUnavailable, type Params, type Store } from './store'

interface PostgresOptions {
  url: string
  poolSize: number
}

/** One connection (the store's pool, or a transaction's) seen as a Conn. */
function conn(client: SQL, db: Db, committed: (() => void)[] | null): Conn {
  const inTx = committed !== null
  return {
    dialect: 'postgres',
    db,
    async query<T>(text: string, params: Params = []) {
      return (await client.unsafe(text, params as unknown[])) as T[]
    },
    async exec(text: string, params: Params = []) {
      return ((await client.unsafe(text, params as unknown[])) as { count: number }).count
    },
    async serialize(key: string) {
      if (!inTx) throw new Error('serialize() holds its lock until the transaction ends: call it inside tx()')
      await client.unsafe('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [key])
    },
    afterCommit(fn) {
      if (committed) committed.push(fn)
      else queueMicrotask(fn)
    },
  }
}

/**
 * What a lock's own connection finds when asked (`HeldLock.check`): its session still holds the
 * lock, or took it again (the connection had been replaced), or another session holds it now.
 */
type LockCheck = 'held' | 'retaken' | 'taken'

/** A session-level advisory lock held on a connection of its own (`PostgresStore.holdLock`). */
export interface HeldLock {
  /**
   * One query on the lock's connection: whether its session holds the lock, and when it does not
   * (Bun dialled the connection again after it dropped, and the server ended the old session and
   * its lock with it), an attempt to take it again. Throws when the database does not answer.
   */
  check(): Promise<LockCheck>
  /** Ends the lock's session, and the lock with it. */
  release(): Promise<void>
}

// The lock's connection holds this one lock and nothing else: any advisory lock of its session is it.
const CHECK_LOCK = `
  SELECT CASE
    WHEN EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted)
      THEN 'held'
    WHEN pg_try_advisory_lock(hashtextextended($1, 0)) THEN 'retaken'
    ELSE 'taken'
  END AS state`

/**
 * PostgreSQL through Bun's built-in client and drizzle's bun-sql driver: a pool of `poolSize`
 * connections per thread, transactions on one reserved connection, and connections of their own
 * for what a session holds: the LISTEN for the cluster's messages, the node lock.
 */
export class PostgresStore implements Store {
  readonly dialect = 'postgres' as const
  readonly db: Db
  private readonly client: SQL
  private readonly base: Conn

  constructor(private readonly opts: PostgresOptions) {
    // A refused or dropped connection fails the query (answered 503) instead of waiting: the pool
    // dials again on the next query, so requests recover by themselves when the database returns.
    this.client = new SQL({ url: opts.url, max: opts.poolSize, connectionTimeout: 5, idleTimeout: 60 })
    this.db = drizzle({ client: this.client })
    this.base = conn(this.client, this.db, null)
  }

  query<T = Record<string, unknown>>(text: string, params?: Params): Promise<T[]> {
    return this.base.query<T>(text, params)
  }

  exec(text: string, params?: Params): Promise<number> {
    return this.base.exec(text, params)
  }

  serialize(key: string): Promise<void> {
    return this.base.serialize(key)
  }

  afterCommit(fn: () => void): void {
    this.base.afterCommit(fn)
  }

  async tx<T>(fn: (tx: Conn) => Promise<T>): Promise<T> {
    const committed: (() => void)[] = []
    const result = (await this.client.begin((txClient) => {
      const client = txClient as unknown as SQL
      return fn(conn(client, drizzle({ client }), committed))
    })) as T
    for (const then of committed) queueMicrotask(then)
    return result
  }

  /** Runs `fn` on one connection of the pool, held for it alone (session-level advisory locks). */
  async withSession<T>(fn: (client: SQL) => Promise<T>): Promise<T> {
    const reserved = await this.client.reserve()
    try {
      return await fn(reserved as unknown as SQL)
    } finally {
      reserved.release()
    }
  }

  /**
   * A connection of its own, outside the pool, under `application_name` (pg_stat_activity tells it
   * apart). When it drops, Bun dials it again at its next query, silently: whatever its session held
   * (a LISTEN, a lock) is gone. Its holder watches for that.
   */
  private ownConnection(name: string): SQL {
    return new SQL({
      url: this.opts.url,
      max: 1,
      connectionTimeout: 5,
      idleTimeout: 0,
      connection: { application_name: name },
    } as ConstructorParameters<typeof SQL>[0])
  }

  /** The locks held on connections of their own: closing the store ends them too. */
  private readonly locks = new Set<HeldLock>()

  /**
   * Holds a session-level advisory lock on `key` on a connection of its own (`gatehouse-lock`),
   * until `release`. Null when another session (a live process) holds it. The server dies, the lock
   * goes with it; the connection drops, the lock goes too, so its holder `check`s it now and then.
   */
  async holdLock(key: string): Promise<HeldLock | null> {
    let client = this.ownConnection('gatehouse-lock')
    try {
      const [row] = (await client.unsafe('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS held', [
        key,
      ])) as { held: boolean }[]
      if (!row?.held) {
        await client.close()
        return null
      }
    } catch (e) {
      await client.close().catch(() => {})
      throw e
    }
    let released = false
    const lock: HeldLock = {
      check: async () => {
        if (released) throw new Error('the lock was released')
        try {
          const [row] = (await client.unsafe(CHECK_LOCK, [key])) as { state: LockCheck }[]
          if (!row) throw new Error('the lock check returned no row')
          return row.state
        } catch (e) {
          // A failed connection may stay failed instead of dialling again (Bun's reserved ones do):
          // the next check asks on a new one.
          if (isStoreUnavailable(e) && !released) {
            const failed = client
            client = this.ownConnection('gatehouse-lock')
            await failed.close().catch(() => {})
          }
          throw e
        }
      },
      release: async () => {
        released = true
        this.locks.delete(lock)
        await client.close()
      },
    }
    this.locks.add(lock)
    return lock
  }

  async ping(): Promise<void> {
    await this.client.unsafe('SELECT 1')
  }

  /** Every serving node holds one LISTEN connection named `gatehouse-listen-…` (see `listen`). */
  async liveNodes(): Promise<number> {
    const [row] = (await this.client.unsafe(
      `SELECT count(*) AS n FROM pg_stat_activity
       WHERE datname = current_database() AND application_name LIKE 'gatehouse-listen-%' AND query ILIKE 'LISTEN%'`,
    )) as { n: number | string }[]
    return Math.max(1, Number(row?.n ?? 1))
  }

  private listener: SQL | null = null

  async listen(channel: string, onMessage: (payload: string) => void, onLost: () => void): Promise<void> {
    // Its own connection. Bun dials it again when it drops and listens anew, silently: whatever
    // was sent meanwhile is lost. So the connection carries a name of its own, and every second the
    // node asks the server which backend listens under it; a new backend (or none, then one) means
    // the connection was replaced: `onLost` drops every view.
    const name = `gatehouse-listen-${crypto.randomUUID()}`
    const listener = this.ownConnection(name)
    this.listener = listener
    await listener.listen(channel, onMessage)
    const backend = async () => {
      const rows = (await this.client.unsafe(
        "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query ILIKE 'LISTEN%'",
        [name],
      )) as { pid: number }[]
      return rows[0]?.pid ?? null
    }
    let known = await backend()
    const timer = setInterval(async () => {
      let now: number | null
      try {
        now = await backend()
      } catch {
        now = null
      }
      if (now !== null && now !== known) onLost()
      known = now ?? -1
    }, 1000)
    timer.unref?.()
    this.stopWatch = () => clearInterval(timer)
  }

  private stopWatch: () => void = () => {}

  async notify(channel: string, payload: string): Promise<void> {
    await this.client.unsafe('SELECT pg_notify($1, $2)', [channel, payload])
  }

  async close(): Promise<void> {
    this.stopWatch()
    for (const lock of this.locks) await lock.release()
    await this.listener?.close()
    await this.client.close()
  }
}
