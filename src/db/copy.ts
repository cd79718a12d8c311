import type { Database } from 'bun:sqlite'
import { migrate } from './client'
import { PostgresStore } from './postgres'
import type { Conn } from './store'

const BATCH = 500

export class CopyRefused extends Error {}

interface CopyCount {
  table: string
  sqlite: number
  postgres: number
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`

/** The store's tables, each after the tables it references (foreign keys), drizzle's own left out. */
function tablesInDependencyOrder(sqlite: Database): string[] {
  const names = (
    sqlite
      .query(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '__drizzle%' ORDER BY name",
      )
      .all() as { name: string }[]
  ).map((r) => r.name)
  const ordered: string[] = []
  const visit = (name: string, path: Set<string>) => {
    if (ordered.includes(name) || path.has(name)) return
    path.add(name)
    const refs = sqlite.query(`PRAGMA foreign_key_list(${quote(name)})`).all() as { table: string }[]
    for (const ref of refs) if (ref.table !== name) visit(ref.table, path)
    ordered.push(name)
  }
  for (const name of names) visit(name, new Set())
  return ordered
}

async function count(conn: Conn, table: string): Promise<number> {
  const [row] = await conn.query<{ n: number | string }>(`SELECT count(*) AS n FROM ${quote(table)}`)
  return Number(row?.n ?? 0)
}

/**
 * Copies a stopped SQLite store into an empty PostgreSQL database: the target is migrated, every
 * table is copied in dependency order, in batches, in one transaction (a failure leaves the target
 * as it was), then the row counts of both sides are compared. Values move as they are: both
 * dialects keep JSON as text and times as epoch milliseconds; SQLite's 0/1 become booleans.
 */
export async function copyStore(
  sqlite: Database,
  targetUrl: string,
  progress: (line: string) => void,
): Promise<CopyCount[]> {
  const target = new PostgresStore({ url: targetUrl, poolSize: 2 })
  try {
    const tables = tablesInDependencyOrder(sqlite)
    // Checked before anything is created in it: a database holding anything else is not ours to fill.
    // Our views (the source's, made by the same migrations) may be there; they hold no rows.
    const views = (
      sqlite.query("SELECT name FROM sqlite_master WHERE type = 'view' ORDER BY name").all() as {
        name: string
      }[]
    ).map((v) => v.name)
    const found = await target.query<{ table_name: string; table_type: string }>(
      "SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
    )
    const present = found.filter((t) => t.table_type === 'BASE TABLE').map((t) => t.table_name)
    const foreign = found.map((t) => t.table_name).filter((t) => !tables.includes(t) && !views.includes(t))
    if (foreign.length > 0) {
      throw new CopyRefused(
        `the target database holds other tables (${foreign.slice(0, 5).join(', ')}): copy into an empty one`,
      )
    }
    const filled: string[] = []
    for (const table of present) if ((await count(target, table)) > 0) filled.push(table)
    if (filled.length > 0) {
      throw new CopyRefused(
        `the target database is not empty (rows in ${filled.join(', ')}): copy into an empty one`,
      )
    }
    await migrate(target)
    const columnTypes = await target.query<{ table_name: string; column_name: string; data_type: string }>(
      "SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = 'public'",
    )
    const typeOf = (table: string, column: string) =>
      columnTypes.find((c) => c.table_name === table && c.column_name === column)?.data_type
    await target.tx(async (tx) => {
      for (const table of tables) {
        const total = (sqlite.query(`SELECT count(*) AS n FROM ${quote(table)}`).get() as { n: number }).n
        const columns = (sqlite.query(`PRAGMA table_info(${quote(table)})`).all() as { name: string }[]).map(
          (c) => c.name,
        )
        const missing = columns.filter((c) => !typeOf(table, c))
        if (missing.length > 0) throw new Error(`${table}.${missing[0]} has no column in the target schema`)
        const booleans = columns.map((c) => typeOf(table, c) === 'boolean')
        const select = sqlite.query(
          `SELECT rowid AS __rowid, ${columns.map(quote).join(', ')} FROM ${quote(table)} WHERE rowid > ? ORDER BY rowid LIMIT ${BATCH}`,
        )
        let last = -Infinity
        let copied = 0
        for (;;) {
          const rows = select.all(last) as Record<string, unknown>[]
          if (rows.length === 0) break
          const params: unknown[] = []
          const tuples = rows.map((row) => {
            const slots = columns.map((c, i) => {
              const value = row[c]
              params.push(booleans[i] && value !== null ? Boolean(value) : value)
              return `$${params.length}`
            })
            return `(${slots.join(', ')})`
          })
          await tx.exec(
            `INSERT INTO ${quote(table)} (${columns.map(quote).join(', ')}) VALUES ${tuples.join(', ')}`,
            params,
          )
          copied += rows.length
          last = rows[rows.length - 1]?.__rowid as number
          progress(`copying ${table}: ${copied}/${total}`)
        }
        if (total === 0) progress(`copying ${table}: 0/0`)
      }
    })
    const counts: CopyCount[] = []
    for (const table of tables) {
      const from = (sqlite.query(`SELECT count(*) AS n FROM ${quote(table)}`).get() as { n: number }).n
      counts.push({ table, sqlite: from, postgres: await count(target, table) })
    }
    return counts
  } finally {
    await target.close()
  }
}
