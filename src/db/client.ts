import { Database } from 'bun:sqlite'
import { chmodSync, closeSync, existsSync, openSync } from 'node:fs'
import { type BunSQLiteDatabase, drizzle } from 'drizzle-orm/bun-sqlite'
import { embeddedMigrations } from './migrations.macro' with { type: 'macro' }

export type Db = BunSQLiteDatabase & { $client: Database }

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

/** Opens the store with the pragmas every connection needs (one per thread: workers open their own). */
export function openDb(path: string): Db {
  restrictFiles(path)
  const sqlite = new Database(path, { create: true, strict: true })
  sqlite.exec('PRAGMA journal_mode = WAL')
  sqlite.exec('PRAGMA synchronous = NORMAL')
  sqlite.exec('PRAGMA foreign_keys = ON')
  sqlite.exec('PRAGMA busy_timeout = 5000')
  return drizzle(sqlite) as Db
}

/** Applies the migrations embedded at build time; idempotent. */
export function migrate(db: Db): number {
  const migrations = embeddedMigrations()
  // biome-ignore lint/suspicious/noExplicitAny: drizzle exposes its dialect migrator only untyped
  const internal = db as any
  internal.dialect.migrate(migrations, internal.session, { migrationsFolder: '(embedded)' })
  return migrations.length
}
