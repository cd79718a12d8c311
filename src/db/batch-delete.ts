import type { Conn, Params } from './store'

const BATCH = 500

/**
 * Deletes the rows of `table` matching `where` (with `$1…` parameters), a batch per statement,
 * yielding between batches: purging after a flood must not hold the write lock for seconds while
 * requests wait on it. Batches go by SQLite's rowid, or PostgreSQL's ctid.
 */
export async function deleteInBatches(
  store: Conn,
  table: string,
  where: string,
  params: Params,
): Promise<number> {
  const row = store.dialect === 'postgres' ? 'ctid' : 'rowid'
  const text = `DELETE FROM ${table} WHERE ${row} IN (SELECT ${row} FROM ${table} WHERE ${where} LIMIT ${BATCH})`
  let total = 0
  for (;;) {
    const changes = await store.exec(text, params)
    total += changes
    if (changes < BATCH) return total
    await new Promise((resolve) => setTimeout(resolve, 0))
  }
}
