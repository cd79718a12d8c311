import type { Db } from './client'

/**
 * Prepared statements built once per connection. drizzle's bun-sqlite driver re-prepares a query
 * on every call (tens of µs); the request hot path (session, workspace guard, lists) prepares once.
 */
export function preparedFor<T>(build: (db: Db) => T): (db: Db) => T {
  const cache = new WeakMap<Db, T>()
  return (db) => {
    let queries = cache.get(db)
    if (!queries) {
      queries = build(db)
      cache.set(db, queries)
    }
    return queries
  }
}
