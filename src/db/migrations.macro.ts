// Runs at bundle/transpile time (imported `with { type: 'macro' }`): the migration SQL of both
// dialects is inlined into the executable, because drizzle's stock migrator reads files that a
// compiled binary lacks.
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

interface EmbeddedMigration {
  sql: string[]
  bps: boolean
  folderMillis: number
  hash: string
}

function read(dialect: string): EmbeddedMigration[] {
  const dir = join(import.meta.dir, '../../db/migrations', dialect)
  const journal = JSON.parse(readFileSync(join(dir, 'meta/_journal.json'), 'utf8')) as {
    entries: { tag: string; when: number; breakpoints: boolean }[]
  }
  return journal.entries.map((entry) => {
    const query = readFileSync(join(dir, `${entry.tag}.sql`), 'utf8')
    return {
      sql: query.split('--> statement-breakpoint'),
      bps: entry.breakpoints,
      folderMillis: entry.when,
      hash: createHash('sha256').update(query).digest('hex'),
    }
  })
}

export function embeddedMigrations(): { sqlite: EmbeddedMigration[]; postgres: EmbeddedMigration[] } {
  return { sqlite: read('sqlite'), postgres: read('postgres') }
}
