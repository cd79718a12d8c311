// `npm test`: every test file under tests/ and src/ on SQLite, and the files that touch the store's
// dialect again on PostgreSQL (a throwaway cluster in a temp folder, removed afterwards:
// scripts/pg-cluster.ts). A file marked `// legs: once — <why>` (scripts/test-legs.ts) runs on the
// SQLite leg only. With two cores or more the legs run side by side, each leg's store files split in
// STORE_PARTS runs, one more run at a time than there are cores: much of a test's time is spent
// waiting (on a server, a browser, a poll), and a third run fills it (TEST_JOBS=N sets how many;
// TEST_JOBS=1: one leg after the other, output streamed). Each `bun test` run prints its own "N pass" / "N fail"; each leg ends with
// "== <leg> leg passed" or "FAILED"; the exit code is non-zero when any failed.
// `npm test -- tests/apps-api.test.ts` runs the files named (or under a folder named, or whose path
// contains a word given); options go to `bun test`. TEST_STORE=sqlite or TEST_STORE=postgres runs one leg.
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { failuresOf } from './junit'
import { migrateDatabase, PostgresMissing, startThrowawayCluster, type ThrowawayCluster } from './pg-cluster'
import { classify, testFiles } from './test-legs'

const root = resolve(import.meta.dir, '..')
const only = process.env.TEST_STORE
/** Once-files are spread over runs of this many, so that a free core picks up the next few. */
const ONCE_CHUNK = 4
/** Each leg's store files are split in this many runs, balanced by size (a fair proxy for time). */
const STORE_PARTS = 3
/** `bun test` options whose value is the next argument (not a file filter). */
const TAKES_VALUE = new Set(['-t', '--test-name-pattern', '--timeout', '--rerun-each', '--seed', '--preload'])

/** The arguments split into files asked for (paths, or words a path contains) and `bun test` options. */
function readArgs(argv: string[]) {
  const options: string[] = []
  const paths: string[] = []
  const words: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg.startsWith('-')) {
      options.push(arg)
      if (TAKES_VALUE.has(arg) && i + 1 < argv.length) options.push(argv[++i]!)
    } else if (existsSync(resolve(root, arg))) paths.push(relative(root, resolve(root, arg)))
    else words.push(arg)
  }
  return { options, paths, words }
}

const { options, paths, words } = readArgs(process.argv.slice(2))
const every = testFiles(root)
const { once: allOnce, problems } = classify(root, every)
if (problems.length) {
  console.error(`Test files with a malformed legs marker (tests/README.md):\n  ${problems.join('\n  ')}`)
  process.exit(1)
}
const asked =
  paths.length + words.length === 0
    ? every
    : [
        ...new Set([
          ...paths.flatMap((p) =>
            statSync(join(root, p)).isDirectory() ? every.filter((f) => !p || f.startsWith(`${p}/`)) : [p],
          ),
          ...every.filter((f) => words.some((w) => f.includes(w))),
        ]),
      ]
const onceSet = new Set(allOnce)
const once = asked.filter((f) => onceSet.has(f))
const both = asked.filter((f) => !onceSet.has(f))

type Leg = 'SQLite' | 'PostgreSQL'
type Run = { leg: Leg; files: string[]; label: string }
type Outcome = { ok: boolean; report: string; output: string; seconds: number }

const legs: Leg[] = []
if (only !== 'postgres' && asked.length) legs.push('SQLite')
if (only !== 'sqlite' && both.length) legs.push('PostgreSQL')
const jobs = Math.max(
  1,
  Number(process.env.TEST_JOBS) ||
    (legs.length > 1 && availableParallelism() > 1 ? availableParallelism() + 1 : 1),
)
// Side by side, each run's output is kept and printed whole when it ends (lines of two runs never mix).
const streamed = jobs === 1

if (only === 'postgres' && once.length)
  console.log(`(${once.length} file(s) marked "legs: once" run on the SQLite leg only: ${once.join(', ')})`)
if (!legs.length) {
  console.log('No test file to run.')
  process.exit(asked.length ? 0 : 1)
}

/** `files` in `n` parts of about equal size, the largest file first (each part keeps path order). */
function split(files: string[], n: number): string[][] {
  const parts = Array.from({ length: Math.min(n, files.length) }, () => ({ bytes: 0, files: [] as string[] }))
  const sized = files
    .map((f) => ({ f, bytes: statSync(join(root, f)).size }))
    .sort((a, b) => b.bytes - a.bytes)
  for (const { f, bytes } of sized) {
    const lightest = parts.reduce((a, b) => (b.bytes < a.bytes ? b : a))
    lightest.bytes += bytes
    lightest.files.push(f)
  }
  return parts.map((p) => p.files.sort())
}
const storeRuns = (leg: Leg): Run[] =>
  split(both, streamed ? 1 : STORE_PARTS).map((files, i, all) => ({
    leg,
    files,
    label: all.length > 1 ? `${leg}, store files part ${i + 1} of ${all.length}` : leg,
  }))

const sqliteRuns: Run[] = []
if (legs.includes('SQLite')) {
  if (streamed) sqliteRuns.push({ leg: 'SQLite', files: [...both, ...once], label: 'SQLite' })
  else {
    if (both.length) sqliteRuns.push(...storeRuns('SQLite'))
    // The largest first, so that the last runs to start are short ones (a long one started last
    // would keep a core busy alone at the end).
    const bySize = [...once].sort((a, b) => statSync(join(root, b)).size - statSync(join(root, a)).size)
    for (let i = 0; i < bySize.length; i += ONCE_CHUNK) {
      const part = bySize.slice(i, i + ONCE_CHUNK)
      sqliteRuns.push({
        leg: 'SQLite',
        files: part,
        label: `SQLite, once-files ${i + 1}–${i + part.length} by size`,
      })
    }
  }
}
const pgRuns: Run[] = legs.includes('PostgreSQL') ? storeRuns('PostgreSQL') : []
// One after the other, SQLite first as always; side by side, the store runs of both legs first, in
// turns (the longest; one store's pace does not hold up all runs at once), then the once-files.
const runs = streamed
  ? [...sqliteRuns, ...pgRuns]
  : [...pgRuns.flatMap((run, i) => [run, ...sqliteRuns.slice(i, i + 1)]), ...sqliteRuns.slice(pgRuns.length)]

const readReport = (report: string) => {
  try {
    return readFileSync(report, 'utf8')
  } catch {
    return ''
  }
}

/** The counts of a JUnit report's root element. */
function countsOf(xml: string) {
  const root = xml.match(/<testsuites\b[^>]*>/)?.[0] ?? ''
  const n = (name: string) => Number(root.match(new RegExp(`\\b${name}="(\\d+)"`))?.[1] ?? 0)
  return { tests: n('tests'), failures: n('failures'), skipped: n('skipped') }
}

const reports = mkdtempSync(join(tmpdir(), 'gatehouse-junit-'))
const children = new Set<ChildProcess>()
let reportCount = 0

function runBunTest(run: Run, env: Record<string, string | undefined>): Promise<Outcome> {
  // On CI only failures are printed, so that the tail CI keeps shows which file failed and why.
  const quiet = process.env.CI ? ['--only-failures'] : []
  const report = join(reports, `${++reportCount}-${run.leg}.xml`)
  const started = performance.now()
  const child = spawn(
    process.execPath,
    [
      'test',
      '--timeout',
      '30000',
      '--reporter=junit',
      `--reporter-outfile=${report}`,
      ...quiet,
      ...options,
      // A leading ./ makes each a path: a bare argument is a filter that could match other files.
      ...run.files.map((f) => `./${f}`),
    ],
    { cwd: root, stdio: streamed ? 'inherit' : ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } },
  )
  children.add(child)
  let output = ''
  child.stdout?.on('data', (chunk) => {
    output += chunk
  })
  child.stderr?.on('data', (chunk) => {
    output += chunk
  })
  return new Promise((done) =>
    child.on('close', (code) => {
      children.delete(child)
      done({ ok: code === 0, report, output, seconds: (performance.now() - started) / 1000 })
    }),
  )
}

const pg: { cluster?: Promise<ThrowawayCluster | null> } = {}
/** The PostgreSQL leg's cluster, started once, with its migrated template; null when PostgreSQL is missing. */
function postgres(): Promise<ThrowawayCluster | null> {
  pg.cluster ??= (async () => {
    try {
      const started = await startThrowawayCluster({
        purpose: 'the PostgreSQL leg',
        otherwise: '(or TEST_STORE=sqlite npm test)',
      })
      try {
        // One migrated template: each test server gets a database copied from it (CREATE DATABASE … TEMPLATE).
        migrateDatabase(await started.createDatabase('gatehouse_template'))
      } catch (e) {
        await started.stop()
        throw e
      }
      return started
    } catch (e) {
      if (!(e instanceof PostgresMissing)) throw e
      console.error(e.message)
      return null
    }
  })()
  return pg.cluster
}

async function execute(run: Run): Promise<Outcome> {
  if (streamed) console.log(`\n== tests on ${run.label}`)
  if (run.leg === 'SQLite') return runBunTest(run, { DATABASE_URL: '', TEST_STORE: 'sqlite' })
  const cluster = await postgres()
  if (!cluster) return { ok: false, report: '', output: '', seconds: 0 }
  return runBunTest(run, {
    // The dialect of the test process; tests/support/postgres.ts gives every server its own database.
    DATABASE_URL: `${cluster.adminUrl}/gatehouse_no_database_set`,
    TEST_PG_ADMIN_URL: cluster.adminUrl,
    TEST_STORE: 'postgres',
  })
}

process.on('SIGINT', () => {
  for (const child of children) child.kill('SIGINT')
})

const began = performance.now()
if (!streamed)
  console.log(
    `${asked.length} test files (${once.length} marked "legs: once"): ${runs.length} runs of bun test, ${jobs} at a time`,
  )
const outcomes = new Map<Run, Outcome>()
const queue = [...runs]
await Promise.all(
  Array.from({ length: Math.min(jobs, runs.length) }, async () => {
    for (let run = queue.shift(); run; run = queue.shift()) {
      const outcome = await execute(run)
      outcomes.set(run, outcome)
      if (!streamed) {
        console.log(`\n== tests on ${run.label} (${run.files.length} files, ${outcome.seconds.toFixed(0)} s)`)
        process.stdout.write(outcome.output)
      }
    }
  }),
)
await (await pg.cluster)?.stop()

let ok = true
for (const leg of legs) {
  const ran = runs.filter((r) => r.leg === leg).map((r) => outcomes.get(r)!)
  const xml = ran.map((o) => readReport(o.report))
  const counts = xml.map(countsOf)
  const sum = (k: keyof ReturnType<typeof countsOf>) => counts.reduce((s, c) => s + c[k], 0)
  const passed = ran.every((o) => o.ok)
  ok &&= passed
  // Repeated last, where a log's tail is read: which file and test failed, and their error.
  const failures = xml.flatMap(failuresOf)
  if (failures.length) console.log(`\n== ${failures.length} failure(s) on ${leg}:\n${failures.join('\n')}`)
  // Not in bun's "N pass" form: CI adds up those of every run, this line repeats them per leg.
  console.log(
    `== ${leg}: ${sum('tests')} tests, ${sum('tests') - sum('failures') - sum('skipped')} passed, ` +
      `${sum('failures')} failed, ${sum('skipped')} skipped, in ${ran.length} run(s)`,
  )
  console.log(`== ${leg} leg ${passed ? 'passed' : 'FAILED'}`)
}
console.log(
  `== ${((performance.now() - began) / 1000).toFixed(0)} s; JUnit reports (per-file times) in ${reports}`,
)
process.exit(ok ? 0 : 1)
