import type { Db } from './client'

const BATCH = 500

/**
 * Deletes the rows of `table` matching `where`, a batch per statement, yielding between batches:
 * purging after a flood must not hold the write lock for seconds while requests wait on it.
 * (SQLite's rowid; the PostgreSQL port will batch by primary key.)
 */
export async function deleteInBatches(
  db: Db,
  table: string,
  where: string,
  params: Record<string, number | string | null>,
): Promise<number> {
  const stmt = db.$client.prepare(
    `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE ${where} LIMIT ${BATCH})`,
  )
  let total = 0
  for (;;) {
    const { changes } = stmt.run(params as never)
    total += changes
    if (changes < BATCH) return total
    await new Promise((resolve) => setTimeout(resolve, 0))
  }
}
