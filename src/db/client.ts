import { Database } from 'bun:sqlite'
import { type BunSQLiteDatabase, drizzle } from 'drizzle-orm/bun-sqlite'
import { embeddedMigrations } from './migrations.macro' with { type: 'macro' }
import * as schema from './schema'

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database }

/** Opens the store with the pragmas every connection needs (one per thread: workers open their own). */
export function openDb(path: string): Db {
  const sqlite = new Database(path, { create: true, strict: true })
  sqlite.exec('PRAGMA journal_mode = WAL')
  sqlite.exec('PRAGMA synchronous = NORMAL')
  sqlite.exec('PRAGMA foreign_keys = ON')
  sqlite.exec('PRAGMA busy_timeout = 5000')
  return drizzle(sqlite, { schema }) as Db
}

/** Applies the migrations embedded at build time; idempotent. */
export function migrate(db: Db): number {
  const migrations = embeddedMigrations()
  // biome-ignore lint/suspicious/noExplicitAny: drizzle exposes its dialect migrator only untyped
  const internal = db as any
  internal.dialect.migrate(migrations, internal.session, { migrationsFolder: '(embedded)' })
  return migrations.length
}
