import { SQL } from 'bun'
import { drizzle } from 'drizzle-orm/bun-sql'
import type { Conn, Db, Params, Store } from './store'

export interface PostgresOptions {
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
 * PostgreSQL through Bun's built-in client and drizzle's bun-sql driver: a pool of `poolSize`
 * connections per thread, transactions on one reserved connection, and one more connection that
 * LISTENs for the cluster's messages.
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
   * Holds a session-level advisory lock on `key` on a connection kept for it, until `release`.
   * Null when another session (a live process) holds it. The server dies, the lock goes with it.
   */
  async holdLock(key: string): Promise<{ release(): Promise<void> } | null> {
    const reserved = await this.client.reserve()
    const [row] = (await reserved.unsafe('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS held', [
      key,
    ])) as { held: boolean }[]
    if (!row?.held) {
      reserved.release()
      return null
    }
    return {
      async release() {
        await reserved.unsafe('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [key]).catch(() => {})
        reserved.release()
      },
    }
  }

  async ping(): Promise<void> {
    await this.client.unsafe('SELECT 1')
  }

  private listener: SQL | null = null

  async listen(channel: string, onMessage: (payload: string) => void, onLost: () => void): Promise<void> {
    // Its own client. Bun gives a LISTEN a dedicated connection and, when it drops, dials it again
    // and listens anew, silently: whatever was sent meanwhile is lost. So the connection carries a
    // name of its own, and every second the node asks the server which backend listens under it; a
    // new backend (or none, then one) means the connection was replaced: `onLost` drops every view.
    const name = `gatehouse-listen-${crypto.randomUUID()}`
    const listener = new SQL({
      url: this.opts.url,
      max: 1,
      connectionTimeout: 5,
      idleTimeout: 0,
      connection: { application_name: name },
    } as ConstructorParameters<typeof SQL>[0])
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
    await this.listener?.close()
    await this.client.close()
  }
}
