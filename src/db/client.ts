import { drizzle as pgDrizzle } from 'drizzle-orm/bun-sql'
import { drizzle as sqliteDrizzle } from 'drizzle-orm/bun-sqlite'
import { dialect } from './columns'
import { embeddedMigrations } from './migrations.macro' with { type: 'macro' }
import { PostgresStore } from './postgres'
import { SqliteStore } from './sqlite'
import type { Store } from './store'

export type { Conn, Db, Store } from './store'

interface StoreConfig {
  /** `postgres://…`, or null for SQLite at `databasePath`. */
  databaseUrl: string | null
  databasePath: string
  databasePoolSize: number
}

/**
 * Opens this thread's store: SQLite at `databasePath`, or PostgreSQL when `databaseUrl` is set. The
 * tables were declared for one dialect when columns.ts loaded; a store of the other cannot serve them.
 */
export function openStore(config: StoreConfig, opts: { poolSize?: number } = {}): Store {
  const wanted = config.databaseUrl ? 'postgres' : 'sqlite'
  if (wanted !== dialect) {
    throw new Error(
      `the schema was loaded for ${dialect}, the store is ${wanted}: set DATABASE_URL before start`,
    )
  }
  return config.databaseUrl
    ? new PostgresStore({ url: config.databaseUrl, poolSize: opts.poolSize ?? config.databasePoolSize })
    : new SqliteStore(config.databasePath)
}

// A constant key: every node of one cluster migrates under the same lock.
const MIGRATION_LOCK = 'gatehouse:migrations'

/**
 * Applies the migrations embedded at build time; idempotent. On PostgreSQL under an advisory lock,
 * so nodes starting together migrate once: the others wait, then find nothing left to do.
 */
export async function migrate(store: Store): Promise<number> {
  const all = embeddedMigrations()
  if (store instanceof SqliteStore) {
    const migrations = all.sqlite
    // drizzle's SQLite migrator is synchronous: run it on the same connection, through its sync driver.
    const db = sqliteDrizzle(store.raw)
    // biome-ignore lint/suspicious/noExplicitAny: drizzle exposes its dialect migrator only untyped
    const internal = db as any
    internal.dialect.migrate(migrations, internal.session, { migrationsFolder: '(embedded)' })
    return migrations.length
  }
  const migrations = all.postgres
  const pg = store as PostgresStore
  await pg.withSession(async (client) => {
    await client.unsafe('SELECT pg_advisory_lock(hashtextextended($1, 0))', [MIGRATION_LOCK])
    try {
      // biome-ignore lint/suspicious/noExplicitAny: drizzle exposes its dialect migrator only untyped
      const internal = pgDrizzle({ client }) as any
      await internal.dialect.migrate(migrations, internal.session, { migrationsFolder: '(embedded)' })
    } finally {
      await client.unsafe('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [MIGRATION_LOCK])
    }
  })
  return migrations.length
}
