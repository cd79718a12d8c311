import {
  customType,
  doublePrecision,
  boolean as pgBoolean,
  index as pgIndex,
  integer as pgInteger,
  primaryKey as pgPrimaryKey,
  pgTable,
  text as pgText,
  uniqueIndex as pgUniqueIndex,
} from 'drizzle-orm/pg-core'
import {
  index as sqliteIndex,
  integer as sqliteInteger,
  primaryKey as sqlitePrimaryKey,
  sqliteTable,
  text as sqliteText,
  uniqueIndex as sqliteUniqueIndex,
} from 'drizzle-orm/sqlite-core'

/**
 * The one way a table is declared: every `schema.ts` builds its tables from these, so each table is
 * written once and becomes a SQLite or a PostgreSQL table by the store this process runs on.
 *
 * The dialect is fixed when this module loads, from the environment the process started with:
 * `DATABASE_URL` (`postgres://…` → PostgreSQL, unset → SQLite), or `GATEHOUSE_SCHEMA_DIALECT`, which
 * drizzle-kit's configs set to generate each dialect's migrations. `loadConfig` refuses a
 * configuration that disagrees with it (createStore), so a process never mixes the two.
 *
 * The builders are typed as PostgreSQL's: the query API both dialects share is the one code may use
 * (no SQLite-only `.get()`/`.all()`/`.run()`: every query is awaited).
 */
export type Dialect = 'sqlite' | 'postgres'

export const isPostgresUrl = (url: string): boolean => /^postgres(ql)?:\/\//i.test(url)

function dialectOf(env: Record<string, string | undefined>): Dialect {
  const forced = env.GATEHOUSE_SCHEMA_DIALECT
  if (forced === 'sqlite' || forced === 'postgres') return forced
  return isPostgresUrl(env.DATABASE_URL ?? '') ? 'postgres' : 'sqlite'
}

export const dialect: Dialect = dialectOf(process.env)
const pg = dialect === 'postgres'

// biome-ignore lint/suspicious/noExplicitAny: one builder stands for the other dialect's at run time
const as = <T>(pgBuilder: T, sqliteBuilder: unknown): T => (pg ? pgBuilder : (sqliteBuilder as any))

export const table = as(pgTable, sqliteTable)
export const index = as(pgIndex, sqliteIndex)
export const uniqueIndex = as(pgUniqueIndex, sqliteUniqueIndex)
export const primaryKey = as(pgPrimaryKey, sqlitePrimaryKey)

export const text = (name: string) => as(pgText(name), sqliteText(name))

/** A small count (attempts, failures, epochs). */
export const integer = (name: string) => as(pgInteger(name), sqliteInteger(name))

/**
 * Milliseconds since the epoch. PostgreSQL's `double precision` holds every integer below 2^53
 * exactly and reaches JavaScript as a number (Bun's client hands `bigint` columns over as strings),
 * so raw hot-path queries read it as they read SQLite's INTEGER.
 */
export const epochMs = (name: string) => as(doublePrecision(name), sqliteInteger(name))

export const boolean = (name: string) => as(pgBoolean(name), sqliteInteger(name, { mode: 'boolean' }))

/** JSON kept as text on both stores (the same bytes, so `store copy` moves it unchanged). */
const pgJsonText = customType<{ data: unknown; driverData: string }>({
  dataType: () => 'text',
  toDriver: (value) => JSON.stringify(value),
  fromDriver: (value) => JSON.parse(value),
})

export const json = <T>(name: string) =>
  as(pgJsonText(name).$type<T>(), sqliteText(name, { mode: 'json' }).$type<T>())
