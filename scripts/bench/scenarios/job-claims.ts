// `job-claims`: --jobs no-op jobs (servers/bench-jobs.ts) enqueued in one statement per round for
// three `serve` nodes on one PostgreSQL database (distinct NODE_ID, JOB_WORKERS=2 each), timed until
// all are done; then one round on one SQLite node for comparison. Every job must run exactly once
// (done, attempts 1): a job that did not is counted as an error, not as throughput. The rate is the
// median round's, jobs / (last done − first done). tests/cluster.test.ts holds exactly-once itself.
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { SQL } from 'bun'
import { cpuWindow } from '../cpu'
import { median } from '../load'
import type { Options } from '../options'
import { freshPostgresDatabase, startGatehouse } from '../process'
import type { Scenario } from '../scenario'
import { BENCH_JOB_KIND } from '../servers/bench-jobs'

const NODES = 3
const WORKERS = 2
const POLL_MS = 50
const WARMUP_JOBS = 1_000

/** The nodes' store, read and written straight through its client (`$1…$n` params). */
interface JobDb {
  dialect: 'sqlite' | 'postgres'
  query<T>(text: string, params?: unknown[]): Promise<T[]>
  close(): Promise<void>
}

function postgresJobDb(url: string): JobDb {
  const sql = new SQL({ url, max: 1 })
  return {
    dialect: 'postgres',
    query: async <T>(text: string, params: unknown[] = []) => [...((await sql.unsafe(text, params)) as T[])],
    close: () => sql.close(),
  }
}

function sqliteJobDb(path: string): JobDb {
  const db = new Database(path)
  db.exec('PRAGMA busy_timeout = 10000')
  return {
    dialect: 'sqlite',
    query: async <T>(text: string, params: unknown[] = []) =>
      db.prepare(text.replace(/\$(\d+)/g, '?$1')).all(...(params as never[])) as T[],
    close: async () => db.close(),
  }
}

interface JobNodes {
  pids: number[]
  databasePid?: number
  db: JobDb
  stop(): Promise<void>
}

/** `nodes` serve processes with the bench job kind: on PostgreSQL one fresh database shared by all. */
async function startJobNodes(opts: Options, store: 'sqlite' | 'postgres', nodes: number): Promise<JobNodes> {
  const pg = store === 'postgres' ? await freshPostgresDatabase() : null
  const started = await Promise.allSettled(
    Array.from({ length: nodes }, (_, i) =>
      startGatehouse({
        logLevel: opts.logLevel,
        entry: 'scripts/bench/servers/serve-with-bench-jobs.ts',
        databaseUrl: pg?.url,
        nodeId: pg ? `bench-node-${i + 1}` : undefined,
        env: { JOB_WORKERS: String(WORKERS) },
      }),
    ),
  )
  const servers = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))
  const failed = started.find((r) => r.status === 'rejected')
  if (failed) {
    await Promise.all(servers.map((s) => s.stop()))
    throw (failed as PromiseRejectedResult).reason
  }
  const db = pg ? postgresJobDb(pg.url) : sqliteJobDb(join(servers[0]!.dataDir, 'gatehouse.db'))
  return {
    pids: servers.map((s) => s.pid),
    databasePid: pg?.postmaster,
    db,
    async stop() {
      await db.close()
      await Promise.all(servers.map((s) => s.stop()))
    },
  }
}

/** Inserts `count` queued bench jobs due now in one statement; ids `job_bench_<round>_<n>`. */
async function enqueue(db: JobDb, round: string, count: number): Promise<void> {
  const columns = 'id, kind, payload, status, run_at, attempts, max_attempts, created_at, updated_at'
  const params = [`job_bench_${round}_`, BENCH_JOB_KIND, Date.now(), count]
  if (db.dialect === 'postgres')
    await db.query(
      `INSERT INTO jobs (${columns})
       SELECT $1::text || lpad(i::text, 7, '0'), $2, 'null', 'queued', $3, 0, 10, $3, $3
       FROM generate_series(1, $4::int) AS i`,
      params,
    )
  else
    await db.query(
      `WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < $4)
       INSERT INTO jobs (${columns})
       SELECT $1 || printf('%07d', i), $2, 'null', 'queued', $3, 0, 10, $3, $3 FROM s`,
      params,
    )
}

/** One batch: the last one's rows deleted, `count` jobs inserted, waited for until none is left. */
async function jobRound(nodes: JobNodes, round: string, count: number) {
  const { db } = nodes
  await db.query('DELETE FROM jobs WHERE kind = $1', [BENCH_JOB_KIND])
  if (db.dialect === 'postgres') await db.query('VACUUM ANALYZE jobs')
  const done = cpuWindow(nodes.pids, { databasePid: nodes.databasePid })
  await enqueue(db, round, count)
  const deadline = Date.now() + 30_000 + count * 20
  for (;;) {
    const [left] = await db.query<{ n: number | string }>(
      "SELECT count(*) AS n FROM jobs WHERE kind = $1 AND status IN ('queued', 'running')",
      [BENCH_JOB_KIND],
    )
    if (Number(left?.n) === 0) break
    if (Date.now() > deadline) throw new Error(`round ${round}: ${left?.n} jobs still to run`)
    await Bun.sleep(POLL_MS)
  }
  const cpu = done()
  const [row] = await db.query<{ once: number | string; first: number; last: number }>(
    "SELECT count(*) FILTER (WHERE status = 'done' AND attempts = 1) AS once, min(updated_at) AS first, max(updated_at) AS last FROM jobs WHERE kind = $1",
    [BENCH_JOB_KIND],
  )
  const spanMs = Math.max(1, Number(row?.last) - Number(row?.first))
  const once = Number(row?.once)
  return { rate: once / (spanMs / 1000), notOnce: count - once, spanMs, cpu }
}

async function measureJobs(
  opts: Options,
  report: Context['report'],
  name: string,
  nodes: JobNodes,
  rounds: number,
) {
  try {
    const warm = await jobRound(nodes, 'w', WARMUP_JOBS)
    let notOnce = warm.notOnce
    const rates: number[] = []
    for (let r = 1; r <= rounds; r++) {
      const m = await jobRound(nodes, String(r), opts.jobs)
      notOnce += m.notOnce
      rates.push(m.rate)
      const server = m.cpu.server === null ? 'n/a' : `${((m.cpu.server / opts.jobs) * 1e6).toFixed(0)} µs/job`
      report.print(
        `${name} round ${r}: ${opts.jobs} jobs in ${(m.spanMs / 1000).toFixed(2)} s, ${m.rate.toFixed(0)} jobs/s; not exactly once: ${m.notOnce}; cpu: nodes ${server}`,
      )
    }
    report.errors(notOnce)
    report.figure(`${name} jobs/s (median round)`, median(rates), 'jobs/s')
    return { rate: median(rates), notOnce }
  } finally {
    await nodes.stop()
  }
}

type Context = Parameters<Scenario['run']>[0]

export default {
  description: `no-op jobs claimed and run by ${NODES} serve nodes on one PostgreSQL database (FOR UPDATE SKIP LOCKED claims with a lease, JOB_WORKERS=${WORKERS} each), each exactly once; then one SQLite node for comparison`,
  method: `per round: --jobs jobs inserted in one statement while the nodes idle, polled every ${POLL_MS} ms until all are done; rate = jobs run exactly once / (last done − first done). A warm-up batch of ${WARMUP_JOBS} first; the median of --rounds`,
  async run({ opts, report }) {
    const pg = await measureJobs(
      opts,
      report,
      `${NODES} nodes on PostgreSQL`,
      await startJobNodes(opts, 'postgres', NODES),
      opts.rounds,
    )
    // One measured round: the comparison is informational, and a deep SQLite backlog is slow.
    const sqlite = await measureJobs(
      opts,
      report,
      '1 node on SQLite',
      await startJobNodes(opts, 'sqlite', 1),
      1,
    )
    report.print(`PostgreSQL / SQLite: ${(pg.rate / sqlite.rate).toFixed(2)}`)
    report.target('>= 1000 jobs/s', pg.rate >= 1_000, `${pg.rate.toFixed(0)} jobs/s`)
    report.target('every job exactly once', pg.notOnce === 0, `${pg.notOnce} not`)
  },
} satisfies Scenario
