import { randomBytes } from 'node:crypto'
import { SQL } from 'bun'

/**
 * The PostgreSQL leg of `npm test` (scripts/test.ts) sets TEST_STORE=postgres and the cluster's
 * TEST_PG_ADMIN_URL; this process's tables were then declared for PostgreSQL (DATABASE_URL).
 */
export const testStore: 'sqlite' | 'postgres' = process.env.TEST_STORE === 'postgres' ? 'postgres' : 'sqlite'

let admin: SQL | null = null

/** A fresh, migrated database (a copy of the leg's template), as a DATABASE_URL. */
export async function createTestDatabase(): Promise<string> {
  const base = process.env.TEST_PG_ADMIN_URL
  if (!base)
    throw new Error('TEST_PG_ADMIN_URL is unset: run the PostgreSQL leg through npm test (scripts/test.ts)')
  admin ??= new SQL({ url: `${base}/postgres`, max: 1 })
  const name = `t_${randomBytes(8).toString('hex')}`
  await admin.unsafe(`CREATE DATABASE ${name} TEMPLATE gatehouse_template`)
  return `${base}/${name}`
}

const byDataDir = new Map<string, Record<string, string>>()

/**
 * What a test server or core adds to its environment for the leg's store: nothing on SQLite (a
 * fresh DATA_DIR is a fresh store); on PostgreSQL a database of its own and the SECRET_KEY it
 * requires. Keyed by DATA_DIR: a server restarted on the same DATA_DIR finds the same store.
 */
export async function storeEnv(dataDir: string): Promise<Record<string, string>> {
  if (testStore === 'sqlite') return {}
  let env = byDataDir.get(dataDir)
  if (!env) {
    env = {
      DATABASE_URL: await createTestDatabase(),
      SECRET_KEY: randomBytes(32).toString('hex'),
      // Hundreds of test stores share one cluster: a few connections each.
      DATABASE_POOL_SIZE: '3',
    }
    byDataDir.set(dataDir, env)
  }
  return env
}
