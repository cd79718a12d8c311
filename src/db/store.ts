import type { BunSQLDatabase } from 'drizzle-orm/bun-sql'
import type { Dialect } from './columns'

export type { Dialect }

/**
 * The drizzle handle. Typed as PostgreSQL's (see columns.ts): on SQLite it is drizzle's async
 * SQLite driver over the same tables, so a query is written once and awaited on either store.
 * Never drizzle's `.transaction()`: `Store.tx` is the one way (check-walls holds it).
 */
export type Db = BunSQLDatabase

export type Params = readonly unknown[]

/** What a query runs on: the store, or one transaction of it. */
export interface Conn {
  readonly dialect: Dialect
  readonly db: Db
  /**
   * Raw SQL with `$1…$n` parameters; rows as plain objects. For the hot paths and for the few
   * statements that differ by dialect (claims with SKIP LOCKED); the rest goes through `db`.
   */
  query<T = Record<string, unknown>>(text: string, params?: Params): Promise<T[]>
  /** A raw statement; how many rows it changed. */
  exec(text: string, params?: Params): Promise<number>
  /**
   * Inside `tx`: holds `key` until the transaction ends, so a check-then-write on one key (the
   * first account, a per-owner limit) cannot interleave with another node's. A no-op on SQLite,
   * whose write transactions already run one at a time.
   */
  serialize(key: string): Promise<void>
  /** Runs `fn` once what this Conn wrote is committed: at once outside a transaction. */
  afterCommit(fn: () => void): void
}

export interface Store extends Conn {
  /**
   * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. The body
   * only touches the store (no network, no password hashing): on SQLite it holds the write lock.
   */
  tx<T>(fn: (tx: Conn) => Promise<T>): Promise<T>
  /** Resolves when the database answers. */
  ping(): Promise<void>
  /**
   * Messages to every node on this store (PostgreSQL NOTIFY); on SQLite, one node, nothing to send.
   * `onLost` runs when the listening connection dropped and came back: messages may have been missed.
   */
  listen(channel: string, onMessage: (payload: string) => void, onLost: () => void): Promise<void>
  notify(channel: string, payload: string): Promise<void>
  /** How many nodes serve on this store now (those listening for its messages); 1 on SQLite. */
  liveNodes(): Promise<number>
  close(): Promise<void>
}

/** Thrown (and answered 503) while the database cannot be reached. */
class StoreUnavailable extends Error {
  constructor(cause: unknown, message = 'the database is unavailable') {
    super(message, { cause })
  }
}

/**
 * Thrown (and answered 503 like StoreUnavailable) when SQLite's write lock could not be had within
 * the store's bounded wait: another process holds the file (a backup, the sqlite3 shell).
 */
export class StoreBusy extends StoreUnavailable {
  constructor(cause: unknown, waitedMs: number) {
    super(cause, `the database stayed locked for ${Math.round(waitedMs)} ms`)
  }
}

const UNAVAILABLE_CODES = new Set([
  'ERR_POSTGRES_CONNECTION_CLOSED',
  'ERR_POSTGRES_CONNECTION_REFUSED',
  'ERR_POSTGRES_CONNECTION_TIMEOUT',
  'ERR_POSTGRES_IDLE_TIMEOUT',
  'ERR_POSTGRES_LIFETIME_TIMEOUT',
  'ECONNREFUSED',
  'ECONNRESET',
])
// SQLSTATE class 08 (connection exception), 57P0x (the server is shutting down, restarting or not
// yet up), 53300 (too many connections) and 3D000 (the database is gone).
const UNAVAILABLE_SQLSTATE = /^(08|57P0|53300$|3D000$)/
// 55000 is broad (object not in prerequisite state); while connecting it means the database refuses
// connections (ALTER DATABASE … ALLOW_CONNECTIONS false, or a maintenance window).
const REFUSING = /not currently accepting connections/

/** Whether `e` (or what it wraps) says the database is out of reach, not that a query was wrong. */
export function isStoreUnavailable(e: unknown): boolean {
  for (let cur = e, depth = 0; cur && depth < 4; depth++) {
    if (cur instanceof StoreUnavailable) return true
    const { code, errno } = cur as { code?: unknown; errno?: unknown }
    if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true
    if (typeof errno === 'string' && UNAVAILABLE_SQLSTATE.test(errno)) return true
    if (errno === '55000' && REFUSING.test(String((cur as { message?: unknown }).message))) return true
    cur = (cur as { cause?: unknown }).cause
  }
  return false
}

/** A unique or primary-key constraint refused the write (SQLite or PostgreSQL's 23505). */
export function isUniqueViolation(e: unknown): boolean {
  for (let cur = e, depth = 0; cur && depth < 4; depth++) {
    const { code, errno } = cur as { code?: unknown; errno?: unknown }
    if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') return true
    if (errno === '23505') return true
    cur = (cur as { cause?: unknown }).cause
  }
  return false
}

/**
 * An error as it may be logged. drizzle wraps a failed statement as `Failed query: <sql> params:
 * <values>`, and those values are emails, password hashes, CSRF tokens: only the driver's error
 * underneath (its code and message) and that error's stack are kept.
 */
export function loggable(e: unknown): { error: string; stack?: string } {
  let cur = e
  for (let depth = 0; depth < 4; depth++) {
    const { message, cause } = (cur ?? {}) as { message?: unknown; cause?: unknown }
    if (typeof message === 'string' && message.startsWith('Failed query:') && cause) cur = cause
    else break
  }
  if (cur instanceof Error) {
    const { code, errno } = cur as { code?: unknown; errno?: unknown }
    const tag = [code, errno].filter((x) => typeof x === 'string').join(' ')
    const message = cur.message.startsWith('Failed query:') ? 'a statement failed' : cur.message
    return {
      error: tag ? `${message} (${tag})` : message,
      stack: message === cur.message ? cur.stack : undefined,
    }
  }
  return { error: String(cur) }
}
