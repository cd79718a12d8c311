import type { Db } from './store'

/**
 * A read built once per drizzle handle and run with `sql.placeholder` values, for the reads of a
 * path every cold instance takes (loading one runs six): drizzle spends ~35 µs building a query's
 * text and mapping, where SQLite runs the read in a few (scripts/bench `memory`). Kept per handle,
 * since each thread opens its own store (a PostgreSQL transaction's handle gets its own, dropped
 * with it).
 *
 *   const byId = preparedRead((db) => db.select().from(t).where(eq(t.id, sql.placeholder('id'))).prepare('t_by_id'))
 *   const rows = await byId(core.db).execute({ id })
 */
export function preparedRead<Q>(build: (db: Db) => Q): (db: Db) => Q {
  const made = new WeakMap<Db, Q>()
  return (db) => {
    let query = made.get(db)
    if (query === undefined) {
      query = build(db)
      made.set(db, query)
    }
    return query
  }
}
