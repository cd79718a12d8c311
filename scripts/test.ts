// `npm test`: the whole suite on SQLite, then again on PostgreSQL (a throwaway cluster in a temp
// folder, removed afterwards: scripts/pg-cluster.ts). Each leg prints its own counts; the exit code
// is non-zero when either failed. Arguments go to both `bun test` runs (`npm test -- tests/apps-api.test.ts`).
// TEST_STORE=sqlite or TEST_STORE=postgres runs one leg only.
import { spawnSync } from 'node:child_process'
import { resolve } from 'node:path'
import { migrateDatabase, PostgresMissing, startThrowawayCluster, type ThrowawayCluster } from './pg-cluster'

const root = resolve(import.meta.dir, '..')
const args = process.argv.slice(2)
const only = process.env.TEST_STORE

function leg(name: string, env: Record<string, string | undefined>): boolean {
  console.log(`\n== tests on ${name}`)
  // On CI only failures are printed, so that the tail CI keeps shows which file failed and why.
  const quiet = process.env.CI ? ['--only-failures'] : []
  const run = spawnSync(process.execPath, ['test', '--timeout', '30000', ...quiet, ...args], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, ...env },
  })
  console.log(`== ${name} leg ${run.status === 0 ? 'passed' : 'FAILED'}`)
  return run.status === 0
}

async function postgresLeg(): Promise<boolean> {
  let cluster: ThrowawayCluster
  try {
    cluster = await startThrowawayCluster({
      purpose: 'the PostgreSQL leg',
      otherwise: '(or TEST_STORE=sqlite npm test)',
    })
  } catch (e) {
    if (!(e instanceof PostgresMissing)) throw e
    console.error(e.message)
    return false
  }
  try {
    // One migrated template: each test server gets a database copied from it (CREATE DATABASE … TEMPLATE).
    migrateDatabase(await cluster.createDatabase('gatehouse_template'))
    const admin = cluster.adminUrl
    return leg('PostgreSQL', {
      // The dialect of the test process; tests/support/postgres.ts gives every server its own database.
      DATABASE_URL: `${admin}/gatehouse_no_database_set`,
      TEST_PG_ADMIN_URL: admin,
      TEST_STORE: 'postgres',
    })
  } finally {
    await cluster.stop()
  }
}

let ok = true
if (only !== 'postgres') ok = leg('SQLite', { DATABASE_URL: '', TEST_STORE: 'sqlite' }) && ok
if (only !== 'sqlite') ok = (await postgresLeg()) && ok
process.exit(ok ? 0 : 1)
