// `npm test`: the whole suite on SQLite, then again on PostgreSQL (a throwaway cluster in a temp
// folder, removed afterwards: scripts/pg-cluster.ts). Each leg prints its own counts; the exit code
// is non-zero when either failed. Arguments go to both `bun test` runs (`npm test -- tests/apps-api.test.ts`).
// TEST_STORE=sqlite or TEST_STORE=postgres runs one leg only.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { migrateDatabase, PostgresMissing, startThrowawayCluster, type ThrowawayCluster } from './pg-cluster'

const root = resolve(import.meta.dir, '..')
const args = process.argv.slice(2)
const only = process.env.TEST_STORE

/** The failures a leg's JUnit report holds, one block each: the file, the test, what it said. */
function failuresOf(report: string): string[] {
  let xml: string
  try {
    xml = readFileSync(report, 'utf8')
  } catch {
    return []
  }
  const decode = (text: string) =>
    text
      .replace(/&#10;/g, '\n')
      .replace(/&quot;/g, '"')
      .replace(/&apos;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&')
  const out: string[] = []
  for (const m of xml.matchAll(
    /<testcase name="([^"]*)"[^>]*?file="([^"]*)"[^>]*>\s*<failure[^>]*>([\s\S]*?)<\/failure>/g,
  )) {
    const details = decode(m[3]!).split('\n').slice(0, 12).join('\n  ')
    out.push(`${m[2]} > ${decode(m[1]!)}\n  ${details}`)
  }
  return out
}

function leg(name: string, env: Record<string, string | undefined>): boolean {
  console.log(`\n== tests on ${name}`)
  // On CI only failures are printed, so that the tail CI keeps shows which file failed and why.
  const quiet = process.env.CI ? ['--only-failures'] : []
  const report = join(mkdtempSync(join(tmpdir(), 'gatehouse-junit-')), 'report.xml')
  const run = spawnSync(
    process.execPath,
    ['test', '--timeout', '30000', '--reporter=junit', `--reporter-outfile=${report}`, ...quiet, ...args],
    { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } },
  )
  // Repeated last, where a log's tail is read: which file and test failed, and their error.
  const failures = failuresOf(report)
  if (failures.length) console.log(`\n== ${failures.length} failure(s) on ${name}:\n${failures.join('\n')}`)
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
