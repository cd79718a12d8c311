// Benchmarks a named scenario against a baseline measured in the same run, and prints the ratio.
//   bun scripts/bench.ts [scenario] [--seconds N] [--connections N] [--warmup N] [--rounds N] [--log-level info|warn|…]
// Scenarios (see `scenarios` below):
//   healthz, apps-list                      gatehouse on SQLite vs a bare Bun.serve hello handler
//   discovery, jwks                         gatehouse on SQLite vs a bare Bun.serve handler answering the same bytes
//   client-credentials                      gatehouse on SQLite vs a bare oidc-provider (the same grant)
//   client-credentials-postgres             gatehouse on PostgreSQL vs gatehouse on SQLite (the same grant)
//   memory, memory-postgres                 --workspaces N (10,000) active workspaces on one node: RSS, cold first token, random/single (--pairs N)
//   memory-stores                           the memory scenario on a PostgreSQL node vs a SQLite node, in turns: each figure's ratio
//   sign-in                                 hosted password sign-ins vs argon2id verifies of the same hash
//   sign-in-metering                        hosted password sign-ins with billing's MAU metering on vs off
//   machine-key-exchange                    RFC 7523 exchanges at POST /v1/auth/token vs their crypto floor
//   scoped-read-machine-vs-session          apps-list with a machine key's token vs with a session cookie
//   apps-list-limiter                       apps-list with the control-plane limiter on vs off
//   tenants-batch                           latency: batches of 100 tenants one after another, p95 target
//   webhook-deliveries                      latency and rate: events to 10 loopback endpoints, deliveries/s and emit → receipt p95
//   provisioning                            latency: workspaces created one after another, p95 target
//   job-claims                              jobs/s of three nodes on one PostgreSQL, exactly once (--jobs N)
//   fuzz                                    hostile requests: no 5xx, no leaked stack
//   mcp-connect                             latency: gatehouse mcp's connect (key read + exchange + tools/list), and a tool call vs the same API call
// Most are throughput scenarios. `provisioning` is a latency scenario: it times a sequence of operations
// against an absolute target and has no baseline (nor uses --seconds, --connections, --warmup or
// --rounds), but prints in the same shape. `fuzz` sends --requests (20,000) hostile requests from
// tests/support/fuzz.ts, seeded by --seed (random unless given), over --connections, and reports the
// rate, the status histogram (per route too) and every 5xx or leaked stack. `job-claims` enqueues
// --jobs (20,000) no-op jobs (scripts/bench/bench-jobs.ts) in one statement per round (--rounds, after
// a warm-up batch) for three `serve` nodes on one PostgreSQL database (distinct NODE_ID, JOB_WORKERS=2
// each), times them until all are done, checks each ran exactly once (done, attempts 1, none dead)
// and reports the median round's rate; then one round on one SQLite node (JOB_WORKERS=2) for comparison.
// `sign-in` runs whole hosted sign-ins (scripts/bench/sign-in.ts: GET /auth, the sign-in page, the
// form post, the resume, the redirect with a code) for --seconds (default 10) over --connections
// (default: CPUs × 2) flows, one end-user account each, signed up on the hosted pages (every
// password correct: the throttle counts failures, and attempts in flight per client address, so at
// most 29 connections), against the bound of argon2id itself: verifies of a hash of the same
// password made by the product's own sign-up (scripts/bench/setup.ts), as many at once as there are
// CPUs, in a child process (scripts/bench/hash-bound.ts). Its ratio is the share of the sign-in path's time hashing.
// The PostgreSQL scenarios start a throwaway cluster (scripts/pg-cluster.ts: Debian's postgresql,
// initdb in a temp folder, fsync off, as `npm test` uses) and give every server a fresh database
// copied from a migrated template; its CPU (postmaster and backends) is printed as `database` and
// counted in the server's CPU per request.
// Fixtures are made as users make them, through the running server's public API (scripts/bench/
// api.ts), on either store alike: a platform account signed up on the hosted pages (its dashboard
// session), workspaces created and polled until active (the job worker provisions them), web apps,
// end users signed up on a workspace's hosted pages. Every answer of the setup is counted by status
// and printed (`setup of … through the API`); any 5xx fails the run. Until 2026-12-05 the bench
// wrote them straight into the store, and never saw provisioning fail under load (issue 56).
// `machine-key-exchange` creates a machine key through the product's API (the dashboard session
// of the workspace's owner) and spends one assertion per exchange (jti is single use): they are
// signed before each load, outside its window, in a pool sized from the rate the last load reached
// (scripts/bench/machine-keys.ts), so signing takes no CPU from the measured load. Its baseline is a
// bare Bun.serve handler doing only what any exchange must: verify the ES256 assertion and sign an
// ES256 token, with jose (scripts/bench/baseline-machine-exchange.ts). `scoped-read-machine-vs-session`
// sets both sides up alike (a session, a workspace with apps, a machine key exchanged once) and reads
// the apps with the key's access token (subject) or the session cookie (baseline).
// Servers run as separate processes on loopback, each with its own env (never this process's
// DATABASE_URL: SQLite in a temp DATA_DIR unless a scenario gives a database; rate limits on, at
// maxima no scenario reaches, unless RATE_LIMIT_* is set here); this process drives the load. A
// throughput run starts both sides and warms each up once, then measures baseline, then subject and
// baseline again for each round (3 by default), window after window with both servers up (the idle
// one re-warmed for half a second before its window, unmeasured), compares each subject window with
// the mean of the baseline windows just before and after it, and reports the median round: drift
// during the run (thermal, noisy neighbours) shows up as a spread between rounds instead of deciding
// the result, and no server's start-up lies between a subject window and its baselines (until
// 2026-12-03 each window had its own process, started and warmed up between them, ~5 s apart).
// Every response is checked (see bench/checked-load.ts); a rejected one counts as an error. On
// Linux it also prints the server's CPU time per request, which moves far less than req/s when
// other processes share the machine (their CPU use is printed too).
// Target lines report `met` or `MISSED`; the exit status is 0 either way (1 only if setup fails, or a
// latency scenario's operation fails outright, e.g. a workspace ends `provisioning_failed`, or
// job-claims' jobs are not all run by its deadline).
import { Database } from 'bun:sqlite'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { SQL } from 'bun'
import { decodeProtectedHeader } from 'jose'
import { ATTEMPT_BUCKETS } from '../src/limits/buckets'
import { type FuzzReport, formatReport, loadRoutes, runFuzz } from '../tests/support/fuzz'
import { Api } from './bench/api'
import { BENCH_JOB_KIND } from './bench/bench-jobs'
import {
  type Check,
  type CheckedLoadResult,
  expect200,
  expectAccessToken,
  expectTotal,
  runCheckedLoad,
  runClosedLoop,
} from './bench/checked-load'
import { type CpuUsage, cpuWindow } from './bench/cpu'
import { formatLoad, formatRate, type MakeRequest } from './bench/load'
import {
  AssertionPool,
  createMachineKey,
  exchangeOnce,
  exchangeRequest,
  holderKey,
  machineToken,
} from './bench/machine-keys'
import { mcpConnectScenario } from './bench/mcp-connect'
import { type Resident, randomTokenLoad, resident, settledResident, touchAll } from './bench/memory'
import { measureProvisioning, type Percentiles, summarize } from './bench/provisioning'
import {
  BENCH_RATE_LIMITS,
  type BenchSession,
  type BenchWorkspace,
  basicAuth,
  benchServerEnv,
  freePort,
  libraryHeaders,
  productPasswordHash,
} from './bench/setup'
import { type SignInTarget, signInOnce } from './bench/sign-in'
import { runDeliveries } from './bench/webhooks'
import { migrateDatabase, PostgresMissing, startThrowawayCluster, type ThrowawayCluster } from './pg-cluster'

const root = join(import.meta.dir, '..')
/** The bun running this script: children run on it too, whether or not `bun` is on PATH. */
const BUN = process.execPath

const FLAGS = [
  'seconds',
  'connections',
  'warmup',
  'log-level',
  'rounds',
  'requests',
  'seed',
  'jobs',
  'workspaces',
  'pairs',
] as const
const args = process.argv.slice(2)
const flag = (name: (typeof FLAGS)[number]) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1] : undefined
}
const positional = args.filter((a, i) => !a.startsWith('--') && !FLAGS.some((f) => args[i - 1] === `--${f}`))
/** --seconds when not given: 5, or the scenario's own (a sign-in takes a large part of a second: more samples). */
const DEFAULT_SECONDS: Record<string, number> = { 'sign-in': 10, 'sign-in-metering': 10 }
const seconds = Number(flag('seconds') ?? DEFAULT_SECONDS[positional[0] ?? ''] ?? 5)
/** --connections when not given: 32, or the scenario's own (a sign-in flow is mostly a hash: a few per CPU). */
const DEFAULT_CONNECTIONS: Record<string, number> = {
  'sign-in': availableParallelism() * 2,
  'sign-in-metering': availableParallelism() * 2,
}
const connections = Number(flag('connections') ?? DEFAULT_CONNECTIONS[positional[0] ?? ''] ?? 32)
/** Seconds of load before each measurement (the token endpoint's code path takes a while to JIT). */
const warmup = Number(flag('warmup') ?? 2)
/**
 * The memory scenario's warm-up before each token load: long enough that every one of 10,000
 * workspaces is asked (the identity plane remembers an instance's state and client for 30 s, so a
 * steady load at random keeps them), unless --warmup says otherwise.
 */
const memoryWarmup = flag('warmup') === undefined ? 10 : warmup
/** The memory scenario's alternated pairs of token loads (random over all, one workspace). */
const memoryPairs = Number(flag('pairs') ?? 9)
/** Gatehouse's LOG_LEVEL: `info` (the default, one access-log line per request) or e.g. `warn`. */
const logLevel = flag('log-level') ?? 'info'
/** Subject runs of a throughput scenario, each between two baseline runs; the median is reported. */
const roundCount = Number(flag('rounds') ?? 3)
/** Jobs per round of the job-claims scenario. */
const jobCount = Number(flag('jobs') ?? 20_000)
/** Active workspaces of the memory scenario. */
const workspaceCount = Number(flag('workspaces') ?? 10_000)
if (
  !(Number.isInteger(workspaceCount) && workspaceCount >= 1) ||
  !(seconds > 0) ||
  !(connections >= 1) ||
  !(warmup >= 0) ||
  !(Number.isInteger(roundCount) && roundCount >= 1) ||
  !(Number.isInteger(jobCount) && jobCount >= 1)
) {
  console.error('--seconds, --connections, --warmup, --rounds and --jobs take positive numbers')
  process.exit(2)
}

/**
 * A server under load: how to build one request and check its response (or, `run`, a load of its
 * own: whole flows, or work the server does itself), how to stop it.
 */
interface Target {
  make?: MakeRequest
  check?: Check
  /** Instead of make and check: runs the load for `seconds` and reports it. */
  run?(opts: { seconds: number; connections: number }): Promise<CheckedLoadResult>
  /** What one operation is, for the printed rate (`sign-ins/s`); `req/s` when absent. */
  unit?: string
  /** Runs once after start and before the warm-up; throws when the server is not what we expect. */
  verify?: () => Promise<string | undefined>
  /**
   * Runs before each load (the warm-up, the measurement) and outside its window, given its seconds:
   * makes what the load will send (single-use assertions). The measurement's note, if any, is printed.
   */
  prepare?: (seconds: number) => Promise<string | undefined>
  /** The server process, for CPU accounting. */
  pid?: number
  /** The PostgreSQL postmaster the server uses, if any: its backends' CPU counts as the server's. */
  databasePid?: number
  stop(): Promise<void>
}

interface Side {
  name: string
  start(): Promise<Target>
}

interface ThroughputScenario {
  kind?: 'throughput'
  description: string
  /** How the figures are taken, when they are not single checked requests; printed under the description. */
  method?: string
  /** Minimum absolute rate of the subject, in its unit. */
  minRate?: number
  /** Minimum ratio subject / mean baseline. */
  minRatio?: number
  unit: string
  baseline: Side
  subject: Side
}

/** What a latency scenario measured: one sample per operation, and the server's CPU meanwhile. */
interface LatencyMeasured {
  samples: Percentiles
  count: number
  /** What one sample is, plural (`workspaces`). */
  unit: string
  /** Lines printed under the result: a breakdown of where the time went. */
  details: string[]
  cpu: CpuUsage
  /** Wall time of the measured window. */
  seconds: number
  /** Operations per second, when the scenario also has a rate target. */
  rate?: number
}

interface LatencyScenario {
  kind: 'latency'
  description: string
  /** How the figures are taken, printed under the description. */
  method: string
  /** Upper bound on the p95, ms. */
  maxP95Ms: number
  /** Lower bound on `rate`, operations per second, when set. */
  minRate?: number
  subject: { name: string; run(): Promise<LatencyMeasured> }
}

/** Hostile requests over every route: no baseline, the target is no 5xx and no leaked stack. */
interface FuzzScenario {
  kind: 'fuzz'
  description: string
  run(opts: {
    seed: number
    count: number
    concurrency: number
  }): Promise<{ report: FuzzReport; cpu: CpuUsage }>
}

/** The nodes of a job-claims measurement and what the bench reads and writes in their store. */
interface JobNodes {
  /** Server processes, for CPU accounting. */
  pids: number[]
  databasePid?: number
  db: JobDb
  stop(): Promise<void>
}

/** Jobs per second through real `serve` processes: no baseline, an absolute target. */
interface JobsScenario {
  kind: 'jobs'
  description: string
  method: string
  /** Minimum jobs per second of the subject (median round). */
  minRate: number
  subject: { name: string; start(): Promise<JobNodes> }
  /** Measured the same way after the subject and printed beside it; no target. */
  comparison?: { name: string; start(): Promise<JobNodes> }
}

/** One node holding many workspaces: its memory, a cold instance's first token, tokens spread over all. */
interface MemoryScenario {
  kind: 'memory'
  description: string
  method: string
  /** Upper bound on the settled RSS after every workspace was touched, MiB. */
  maxRssMiB: number
  /** Upper bound on the p95 of a workspace's first token, ms. */
  maxFirstTokenP95Ms: number
  /** Minimum ratio: token rate at random over all workspaces / on one workspace. */
  minRandomRatio: number
  /** Workspaces touched at once. */
  concurrency: number
  /** The node's store: SQLite in its DATA_DIR unless PostgreSQL (a fresh database of this run's cluster). */
  store?: 'postgres'
}

/** The memory scenario on a PostgreSQL node and a SQLite node at once, their figures alternated. */
interface MemoryStoresScenario {
  kind: 'memory-stores'
  description: string
  method: string
  /** Minimum of each ratio, PostgreSQL node against SQLite node (1 = as good). */
  minRatio: number
  /** Workspaces touched at once. */
  concurrency: number
  /** Workspaces one node touches before the other's turn. */
  chunk: number
}

type Scenario =
  | ThroughputScenario
  | LatencyScenario
  | FuzzScenario
  | JobsScenario
  | MemoryScenario
  | MemoryStoresScenario

interface Started {
  url: string
  proc: ReturnType<typeof Bun.spawn>
}

/** Spawns a process and waits for its `listening` log line (the baselines print one). */
async function start(cmd: string[], env: Record<string, string> = {}): Promise<Started> {
  const proc = Bun.spawn(cmd, {
    cwd: root,
    env: { ...process.env, ...env },
    stdout: 'pipe',
    stderr: 'inherit',
  })
  const decoder = new TextDecoder()
  let seen = ''
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader()
  for (;;) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`${cmd.join(' ')} exited before listening:\n${seen}`)
    seen += decoder.decode(value)
    const line = seen.split('\n').find((l) => l.includes('"msg":"listening"'))
    if (line) {
      // Keep draining stdout so the server never blocks on a full pipe.
      void (async () => {
        while (!(await reader.read()).done) {}
      })()
      return { url: JSON.parse(line).url.replace('localhost', '127.0.0.1'), proc }
    }
  }
}

/** SIGTERM, then SIGKILL if the process has not exited within 5 s (a hung shutdown must not hang the bench). */
async function stopProcess(proc: ReturnType<typeof Bun.spawn>): Promise<void> {
  proc.kill()
  const timer = setTimeout(() => proc.kill('SIGKILL'), 5000)
  await proc.exited
  clearTimeout(timer)
}

interface Gatehouse {
  url: string
  env: Record<string, string>
  dataDir: string
  pid: number
  stop(): Promise<void>
}

interface GatehouseOptions {
  /** A PostgreSQL database (`postgres://…`); SQLite in the server's temp DATA_DIR when absent. */
  databaseUrl?: string
  nodeId?: string
  /** What to run instead of `src/main.ts serve` (a serve entry with extra job kinds). */
  command?: string[]
  /** More environment (JOB_WORKERS, …). */
  env?: Record<string, string>
}

/** Every limit off: what the limiter's cost is measured against. */
const LIMITER_OFF = Object.fromEntries(
  Object.keys(BENCH_RATE_LIMITS)
    .filter((k) => k !== 'RATE_LIMIT_DATA_PLANE_BURST')
    .map((k) => [k, '0']),
)

/**
 * Starts `gatehouse serve` on a port picked here, so BASE_URL (and every issuer) names the URL the
 * bench calls. Its stdout (the access log) goes to a file in its temp DATA_DIR rather than through
 * a pipe this process would have to drain while it drives the load; readiness is a 200 on /healthz,
 * which works at any LOG_LEVEL and must name the store asked for.
 */
async function startGatehouse(opts: GatehouseOptions = {}): Promise<Gatehouse> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-'))
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const store = opts.databaseUrl ? 'postgres' : 'sqlite'
  const env: Record<string, string> = {
    ...benchServerEnv(dataDir, port, logLevel),
    DATABASE_URL: opts.databaseUrl ?? '',
    ...(opts.nodeId ? { NODE_ID: opts.nodeId } : {}),
    ...opts.env,
  }
  const logFile = join(dataDir, 'stdout.log')
  // BENCH_CPU_PROF=<dir>: each server writes a .cpuprofile there when it stops (Bun's --cpu-prof).
  const profile = process.env.BENCH_CPU_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
    : []
  const proc = Bun.spawn(opts.command ?? [BUN, ...profile, 'src/main.ts', 'serve'], {
    cwd: root,
    env: { ...process.env, ...env },
    stdout: Bun.file(logFile),
    stderr: 'inherit',
  })
  const stop = async () => {
    await stopProcess(proc)
    rmSync(dataDir, { recursive: true, force: true })
  }
  const deadline = Date.now() + 30_000
  for (;;) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      const log = readFileSync(logFile, 'utf8')
      await stop()
      throw new Error(`gatehouse did not start on ${url}:\n${log.slice(-2000)}`)
    }
    const health = await fetch(`${url}/healthz`).then(
      async (r) => (r.ok ? ((await r.json()) as { store?: string }) : null),
      () => null,
    )
    if (health) {
      if (health.store !== store) {
        await stop()
        throw new Error(`gatehouse on ${url} runs on ${health.store}, not ${store}`)
      }
      return { url, env, dataDir, pid: proc.pid, stop }
    }
    await Bun.sleep(50)
  }
}

/** The throwaway PostgreSQL cluster of this run, started by the first scenario side that needs it. */
let postgres: Promise<ThrowawayCluster> | null = null
const TEMPLATE = 'gatehouse_template'

function postgresCluster(): Promise<ThrowawayCluster> {
  postgres ??= (async () => {
    let cluster: ThrowawayCluster
    try {
      cluster = await startThrowawayCluster({ purpose: 'the PostgreSQL scenarios' })
    } catch (e) {
      if (e instanceof PostgresMissing) {
        console.error(e.message)
        process.exit(1)
      }
      throw e
    }
    try {
      migrateDatabase(await cluster.createDatabase(TEMPLATE))
    } catch (e) {
      await cluster.stop()
      throw e
    }
    return cluster
  })()
  return postgres
}

/** Stops this run's cluster, if one was started. */
async function stopPostgres(): Promise<void> {
  if (postgres) await (await postgres).stop()
}

/** A fresh migrated database in this run's cluster (a copy of the template), as a DATABASE_URL. */
async function freshPostgresDatabase(): Promise<{ url: string; postmaster: number }> {
  const cluster = await postgresCluster()
  return { url: await cluster.createDatabase(undefined, { template: TEMPLATE }), postmaster: cluster.pid }
}

/** Prints what setting `what` up asked of the server's API, by status (a 5xx has thrown already). */
const printSetup = (what: string, api: Api) =>
  console.log(`  setup of ${what} through the API: ${api.statuses}`)

/** GETs of one URL. */
const getTarget = (url: string, pid: number, stop: () => Promise<void>): Target => ({
  make: () => new Request(url),
  check: expect200,
  pid,
  stop,
})

/** POST /token with grant_type=client_credentials and client_secret_basic; a fresh Request each time. */
function clientCredentialsTarget(
  tokenUrl: string,
  clientId: string,
  clientSecret: string,
  pid: number,
  stop: () => Promise<void>,
): Target {
  const authorization = basicAuth(clientId, clientSecret)
  const make = () =>
    new Request(tokenUrl, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    })
  return {
    make,
    check: expectAccessToken,
    // Both sides must issue the same kind of token: a JWT access token signed with ES256.
    async verify() {
      const res = await fetch(make())
      const body = await res.text()
      const problem = expectAccessToken(res.status, body)
      if (problem) throw new Error(`${tokenUrl}: ${problem}`)
      const header = decodeProtectedHeader(JSON.parse(body).access_token)
      if (header.alg !== 'ES256') throw new Error(`${tokenUrl}: access token signed with ${header.alg}`)
      return `access token: JWT, alg ${header.alg}, typ ${header.typ}`
    },
    pid,
    stop,
  }
}

const bareHello: Side = {
  name: 'bare Bun.serve hello',
  async start() {
    const s = await start([BUN, 'scripts/bench/baseline-hello.ts'])
    return getTarget(`${s.url}/`, s.proc.pid, () => stopProcess(s.proc))
  },
}

/**
 * The bytes a workspace instance answers at `path`, the headers the library answers with them, and
 * the path of its URL (the baseline is asked the same one: the same request line for both sides).
 */
interface Answer {
  body: string
  headers: Record<string, string>
  pathname: string
}
const answers = new Map<string, Promise<Answer>>()

/**
 * What a warm workspace instance of a fresh Gatehouse answers at `path` (set up as the subject is:
 * same fixtures, same code), fetched once per run before the first baseline needs it: the
 * baseline then serves the same bytes (only the issuer's port and the keys differ, not the size).
 */
function answerOf(path: string): Promise<Answer> {
  let answer = answers.get(path)
  if (!answer) {
    answer = (async () => {
      const { gh, url } = await gatehouseWithWorkspace(path)
      try {
        const res = await fetch(url)
        if (res.status !== 200) throw new Error(`${url} answered ${res.status}`)
        const headers = Object.fromEntries(libraryHeaders(res.headers))
        const body = Buffer.from(await res.arrayBuffer()).toString('base64')
        return { body, headers, pathname: new URL(url).pathname }
      } finally {
        await gh.stop()
      }
    })()
    answers.set(path, answer)
  }
  return answer
}

/**
 * A bare Bun.serve handler answering with the bytes of `path` on a workspace instance and the
 * headers the library answers with them (LIBRARY_HEADERS; scripts/bench/baseline-bytes.ts): what
 * the identity plane's cached answers are measured against.
 */
const bareBytes = (path: string, what: string): Side => ({
  name: `bare Bun.serve, same bytes (${what})`,
  async start() {
    const answer = await answerOf(path)
    const s = await start([BUN, 'scripts/bench/baseline-bytes.ts'], {
      BENCH_BODY: answer.body,
      BENCH_HEADERS: JSON.stringify(answer.headers),
    })
    return getTarget(`${s.url}${answer.pathname}`, s.proc.pid, () => stopProcess(s.proc))
  },
})

/**
 * Assertions signed ahead per second of load: twice the best rate seen, and at least twice 10,000/s
 * (the floor's rate on an idle 2-core machine is near that; a warm-up on a busy machine is slower than
 * the measurement after it). A pool that ran dry would cap the rate it measures.
 */
const EXCHANGE_POOL = { minRate: 10_000, headroom: 2 }

/**
 * POST {token_url} grant_type=jwt-bearer, each with an assertion of `pool` never sent before; every
 * answer must carry an access token. verify() checks it is an ES256 JWT and that a replayed
 * assertion is refused, so both sides keep jti single use.
 */
function machineExchangeTarget(pool: AssertionPool, pid: number, stop: () => Promise<void>): Target {
  const { token_url: url } = pool.file
  return {
    unit: 'exchanges/s',
    make: () => exchangeRequest(pool.file, pool.take()),
    check: expectAccessToken,
    async verify() {
      const assertion = await pool.sign()
      const first = await exchangeOnce(pool.file, assertion)
      const problem = expectAccessToken(first.status, first.text)
      if (problem) throw new Error(`${url}: ${problem}`)
      const header = decodeProtectedHeader(String(first.body.access_token))
      if (header.alg !== 'ES256') throw new Error(`${url}: access token signed with ${header.alg}`)
      const replay = await exchangeOnce(pool.file, assertion)
      if (replay.status !== 400 || replay.body.error !== 'invalid_grant')
        throw new Error(
          `${url}: a replayed assertion answered ${replay.status}: ${replay.text.slice(0, 160)}`,
        )
      return `access token: JWT, alg ${header.alg}, typ ${header.typ}; a replayed assertion: 400 invalid_grant`
    },
    async prepare(forSeconds) {
      const t0 = performance.now()
      await pool.ready(forSeconds)
      const seen = pool.observedRate ? `, best rate so far ${formatRate(pool.observedRate)}/s` : ''
      return `${pool.size} assertions ready, signed ahead in ${((performance.now() - t0) / 1000).toFixed(1)} s (for ${forSeconds} s${seen})`
    },
    pid,
    stop,
  }
}

/**
 * The floor of the exchange: a bare Bun.serve handler verifying ES256 assertions of a key made here
 * and signing ES256 tokens, with jose (scripts/bench/baseline-machine-exchange.ts).
 */
const bareExchange: Side = {
  name: 'bare ES256 exchange',
  async start() {
    const key = await holderKey()
    const s = await start([BUN, 'scripts/bench/baseline-machine-exchange.ts'], {
      BENCH_KEY_ID: key.keyId,
      BENCH_PUBLIC_JWK: key.publicJwk,
    })
    const pool = await AssertionPool.of(key.file(`${s.url}/v1/auth/token`), EXCHANGE_POOL)
    return machineExchangeTarget(pool, s.proc.pid, () => stopProcess(s.proc))
  },
}

/**
 * A Gatehouse with a dashboard session and an active workspace the session's account owns, with
 * `apps` web apps: what the control plane's API is called with.
 */
async function gatehouseWithOwnedWorkspace(apps: number, env: Record<string, string> = {}) {
  const gh = await startGatehouse({ env })
  try {
    const api = new Api(gh.url)
    const session = await api.signUpOwner()
    const ws = await api.createWorkspace(session, { apps })
    printSetup('the workspace', api)
    return { gh, session, ws }
  } catch (e) {
    await gh.stop()
    throw e
  }
}

/** How apps-list reads are authenticated: the owner's dashboard session, or a machine key's token. */
type AppsListCaller = 'session' | 'machine token'

/**
 * GET /v1/workspaces/{id}/apps (APPS_LISTED apps) of a fresh Gatehouse as `caller`. For a machine
 * token, or with `seedKey`, a workspace:read machine key is created through the API and exchanged
 * once, so that both sides of a comparison hold the same rows and have run the same setup.
 */
async function startAppsList(
  caller: AppsListCaller,
  opts: { seedKey?: boolean; env?: Record<string, string> } = {},
): Promise<Target> {
  const { gh, session, ws } = await gatehouseWithOwnedWorkspace(APPS_LISTED, opts.env)
  try {
    let headers: Record<string, string> = { cookie: session.cookie }
    let who = `session cookie ${session.cookie.split('=')[0]} of platform account ${session.accountId}`
    if (caller === 'machine token' || opts.seedKey) {
      const file = await createMachineKey(gh.url, session, ws.workspaceId, ['workspace:read'])
      const token = await machineToken(file)
      if (caller === 'machine token') {
        headers = { authorization: `Bearer ${token}` }
        who = `access token (${decodeProtectedHeader(token).alg}) of machine key ${file.key_id}, workspace:read`
      }
    }
    const url = `${gh.url}/v1/workspaces/${ws.workspaceId}/apps`
    const check = expectTotal(APPS_LISTED)
    return {
      make: () => new Request(url, { headers }),
      check,
      async verify() {
        // Without the credential the route must refuse, or the load below would not measure auth.
        const anonymous = await fetch(url)
        await anonymous.body?.cancel()
        if (anonymous.status !== 401)
          throw new Error(`${url} without a credential answered ${anonymous.status}`)
        const res = await fetch(url, { headers })
        const problem = check(res.status, await res.text())
        if (problem) throw new Error(`${url}: ${problem}`)
        return `${who}; ${APPS_LISTED} apps listed (401 without it)`
      },
      pid: gh.pid,
      stop: gh.stop,
    }
  } catch (e) {
    await gh.stop()
    throw e
  }
}

/**
 * A Gatehouse with one active workspace (keys, a web app) whose Provider is built and warm, made
 * through its API by a platform account signed up on its hosted pages (`more`: what else the
 * scenario makes through it). On SQLite by default; `store: 'postgres'`: on a fresh database of this
 * run's cluster.
 */
async function gatehouseWithWorkspace(
  path: string,
  opts: {
    store?: 'sqlite' | 'postgres'
    redirectUri?: string
    env?: Record<string, string>
    more?: (api: Api, owner: BenchSession, ws: BenchWorkspace) => Promise<void>
  } = {},
) {
  const pg = opts.store === 'postgres' ? await freshPostgresDatabase() : null
  const gh = await startGatehouse({
    ...(pg ? { databaseUrl: pg.url, nodeId: 'bench-node-1' } : {}),
    env: opts.env,
  })
  try {
    const api = new Api(gh.url)
    const owner = await api.signUpOwner()
    const ws = await api.createWorkspace(owner, { redirectUri: opts.redirectUri })
    await opts.more?.(api, owner, ws)
    printSetup(opts.more ? 'the workspace and the rest' : 'the workspace', api)
    // The first request to an instance builds its Provider: make sure that is behind us and that
    // the issuer the server announces is the URL we call.
    const res = await fetch(`${ws.issuer}/.well-known/openid-configuration`)
    const doc = (await res.json()) as { issuer?: string }
    if (res.status !== 200 || doc.issuer !== ws.issuer) {
      throw new Error(`discovery of ${ws.issuer} answered ${res.status} with issuer ${doc.issuer}`)
    }
    return { gh, ws, url: `${ws.issuer}${path}`, databasePid: pg?.postmaster }
  } catch (e) {
    await gh.stop()
    throw e
  }
}

/**
 * The sign-in scenarios' server: whole hosted sign-ins of end users, one account per connection,
 * each signed up on the workspace's hosted pages (its login policy lets an unverified address sign
 * in: nobody reads their mail); `env` adds to the server's environment (billing's metering for
 * `sign-in-metering`).
 */
async function startSignIns(env: Record<string, string> = {}): Promise<Target> {
  // Every attempt in flight holds a slot of the per-address throttle (all come from 127.0.0.1),
  // and verify() below spends one failure of it.
  const maxConnections = ATTEMPT_BUCKETS.signInAddress.limit - 1
  if (connections > maxConnections)
    throw new Error(
      `sign-in: at most ${maxConnections} connections (the sign-in throttle allows ${ATTEMPT_BUCKETS.signInAddress.limit} attempts per client address at once)`,
    )
  const emails = Array.from({ length: connections }, (_, i) => `user-${i}@bench.example`)
  const { gh, ws } = await gatehouseWithWorkspace('', {
    redirectUri: SIGN_IN_REDIRECT_URI,
    env,
    async more(api, owner, ws) {
      await api.setLoginPolicy(owner, ws.workspaceId, { require_email_verification: false })
      // One at a time: a sign-up is mostly a hash, and each in flight takes a slot of the address's throttle.
      for (const [i, email] of emails.entries())
        await api.signUpEndUser(ws, SIGN_IN_REDIRECT_URI, {
          email,
          password: SIGN_IN_PASSWORD,
          name: `Bench user ${i}`,
        })
    },
  })
  try {
    const target: SignInTarget = {
      origin: gh.url,
      issuer: ws.issuer,
      clientId: ws.clientId,
      redirectUri: SIGN_IN_REDIRECT_URI,
    }
    return {
      unit: 'sign-ins/s',
      // Connection i signs in as account i: never two attempts of one account at once.
      run: (opts) =>
        runClosedLoop(
          async (i) => (await signInOnce(target, emails[i % emails.length]!, SIGN_IN_PASSWORD)).problem,
          opts,
        ),
      async verify() {
        // The password is what is checked: a wrong one is refused (one failure, of the 5 an
        // account may have; the right one below resets them).
        const wrong = await signInOnce(target, emails[0]!, `${SIGN_IN_PASSWORD}!`)
        if (!wrong.problem?.includes('HTTP 401'))
          throw new Error(`a wrong password was not refused with a 401: ${wrong.problem ?? 'it signed in'}`)
        const ok = await signInOnce(target, emails[0]!, SIGN_IN_PASSWORD)
        if (ok.problem) throw new Error(`a sign-in failed: ${ok.problem} (${ok.steps.join(' → ')})`)
        return `one sign-in: ${ok.steps.join(' → ')}; ${emails.length} accounts, one per connection; a wrong password: 401`
      },
      pid: gh.pid,
      stop: gh.stop,
    }
  } catch (e) {
    await gh.stop()
    throw e
  }
}

/** Apps in the workspace the apps-list scenario lists. */
const APPS_LISTED = 5
/** tenants-batch: batches sent, and tenants in each (SPEC: at most 100). */
const BATCH_COUNT = 40
const BATCH_ITEMS = 100
/** webhook-deliveries: events, endpoints each event goes to, and events per emitting transaction. */
const WEBHOOK_EVENTS = 2_000
const WEBHOOK_ENDPOINTS = 10
const WEBHOOK_BATCH = 100
const PROVISION_COUNT = 50
const PROVISION_POLL_MS = 10
const PROVISION_TIMEOUT_MS = 10_000
/** Nodes and job worker threads per node of the job-claims scenario. */
const JOB_NODES = 3
const JOB_WORKERS = 2
const JOB_POLL_MS = 50
/** Jobs of the job-claims warm-up batch (not measured). */
const JOB_WARMUP = 1_000

/**
 * What the job-claims scenario reads and writes in the nodes' store, straight through the
 * database client (no schema: this process's tables may be of the other dialect). `$1…$n` params.
 */
interface JobDb {
  dialect: 'sqlite' | 'postgres'
  query<T>(text: string, params?: unknown[]): Promise<T[]>
  close(): Promise<void>
}

function postgresJobDb(url: string): JobDb {
  const sql = new SQL({ url, max: 1 })
  return {
    dialect: 'postgres',
    async query<T>(text: string, params: unknown[] = []) {
      return [...((await sql.unsafe(text, params)) as T[])]
    },
    close: () => sql.close(),
  }
}

function sqliteJobDb(path: string): JobDb {
  const db = new Database(path)
  db.exec('PRAGMA busy_timeout = 10000')
  return {
    dialect: 'sqlite',
    async query<T>(text: string, params: unknown[] = []) {
      return db.prepare(text.replace(/\$(\d+)/g, '?$1')).all(...(params as never[])) as T[]
    },
    async close() {
      db.close()
    },
  }
}

/**
 * Inserts `count` queued bench jobs due at `now` in one statement (the columns JobQueue writes;
 * the rest keep their defaults). Ids `job_bench_<round>_<n>`: claims go by run_at, then id.
 */
async function enqueueBenchJobs(db: JobDb, round: string, count: number, now: number): Promise<void> {
  const columns = 'id, kind, payload, status, run_at, attempts, max_attempts, created_at, updated_at'
  if (db.dialect === 'postgres') {
    await db.query(
      `INSERT INTO jobs (${columns})
       SELECT $1::text || lpad(i::text, 7, '0'), $2, 'null', 'queued', $3, 0, 10, $3, $3
       FROM generate_series(1, $4::int) AS i`,
      [`job_bench_${round}_`, BENCH_JOB_KIND, now, count],
    )
  } else {
    await db.query(
      `WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < $4)
       INSERT INTO jobs (${columns})
       SELECT $1 || printf('%07d', i), $2, 'null', 'queued', $3, 0, 10, $3, $3 FROM s`,
      [`job_bench_${round}_`, BENCH_JOB_KIND, now, count],
    )
  }
}

/**
 * Starts `nodes` serve processes with the bench job kind (JOB_WORKERS each): on PostgreSQL, one
 * fresh database shared by all, distinct NODE_IDs; on SQLite, one node.
 */
async function startJobNodes(store: 'sqlite' | 'postgres', nodes: number): Promise<JobNodes> {
  if (store === 'sqlite' && nodes !== 1) throw new Error('a SQLite store has one node')
  const pg = store === 'postgres' ? await freshPostgresDatabase() : null
  const command = [BUN, 'scripts/bench/serve-with-bench-jobs.ts']
  const started = await Promise.allSettled(
    Array.from({ length: nodes }, (_, i) =>
      startGatehouse({
        command,
        databaseUrl: pg?.url,
        nodeId: pg ? `bench-node-${i + 1}` : undefined,
        env: { JOB_WORKERS: String(JOB_WORKERS) },
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

/**
 * Billing configured, so MAU metering runs on every sign-in. The sign-in path never calls Stripe
 * (no meter event name: no usage report job), so the API host is an address nothing answers.
 */
const METERING_ON = {
  STRIPE_SECRET_KEY: 'sk_test_bench',
  STRIPE_WEBHOOK_SECRET: 'whsec_bench',
  STRIPE_PRICE_FREE: 'price_bench_free',
  STRIPE_PRICE_PRO: 'price_bench_pro',
  STRIPE_API_HOST: 'http://127.0.0.1:9',
  BILLING_FREE_INCLUDED_MAU: '100000000',
}

/** The password of every account of the sign-in scenario. */
const SIGN_IN_PASSWORD = 'correct horse battery staple'
/** The sign-in scenario's app redirects here; nothing serves it (the redirect is read, not followed). */
const SIGN_IN_REDIRECT_URI = 'https://rp.example/cb'
let signInHash: Promise<string> | null = null
/** The hash the product makes of SIGN_IN_PASSWORD, made once per run: the bound verifies one made as the accounts' were. */
const signInPasswordHash = () => {
  signInHash ??= productPasswordHash(SIGN_IN_PASSWORD)
  return signInHash
}

/** argon2id verifies of the sign-in accounts' hash, as many at once as CPUs, in a child process. */
const hashBound: Side = {
  name: 'argon2id verify bound',
  async start() {
    const hash = await signInPasswordHash()
    const s = await start([BUN, 'scripts/bench/hash-bound.ts'], {
      BENCH_PASSWORD: SIGN_IN_PASSWORD,
      BENCH_HASH: hash,
    })
    const concurrency = availableParallelism()
    return {
      unit: 'verifies/s',
      async run(opts) {
        const res = await fetch(`${s.url}/run?seconds=${opts.seconds}&concurrency=${concurrency}`, {
          method: 'POST',
        })
        if (!res.ok) throw new Error(`hash-bound.ts answered HTTP ${res.status}: ${await res.text()}`)
        const out = (await res.json()) as Omit<CheckedLoadResult, 'errorKinds'> & {
          errorKinds: [string, number][]
        }
        return { ...out, errorKinds: new Map(out.errorKinds) }
      },
      async verify() {
        const params = /^\$(argon2id)\$v=\d+\$([^$]+)\$/.exec(hash)
        if (!params) throw new Error(`the product's hash is not argon2id: ${hash.slice(0, 30)}…`)
        return `Bun.password.verify of the product's hash (${params[1]}, ${params[2]}), ${concurrency} at once (CPUs)`
      },
      pid: s.proc.pid,
      stop: () => stopProcess(s.proc),
    }
  },
}

/**
 * Workspaces the memory scenario touches first and leaves out of its figures: a new process's first
 * requests run its code before the JIT compiled it (the first tokens take 15-40 ms), which is the
 * process's start, not an instance's. They stay held: the node holds these too when RSS is read.
 */
const PROCESS_WARMUP_WORKSPACES = 200

/**
 * Workspaces the memory scenarios create at once, each from POST /v1/workspaces until its app is
 * made: enough to keep the job worker's provisioning busy while the API answers the others.
 */
const CREATION_CONCURRENCY = 16

/**
 * Workspaces one node touches in the memory-stores scenario before the other's turn: ten turns each
 * of 10,000 (about a second each), short enough that the machine's speed moves little within a pair.
 */
const MEMORY_STORES_CHUNK = 1000

/** The memory scenario on one node of either store (the same fixtures, load and targets). */
function memoryScenario(store?: 'postgres'): MemoryScenario {
  return {
    kind: 'memory',
    description: `${workspaceCount} active workspaces on one gatehouse node (${store === 'postgres' ? 'PostgreSQL: a fresh database of a local throwaway cluster, fsync off' : 'SQLite'}), each with keys and a web app`,
    method: `workspaces created through the API as a user creates them (POST /v1/workspaces, polled until active, then POST …/apps for a web app; ${CREATION_CONCURRENCY} at a time; a 5xx fails the run), ${PROCESS_WARMUP_WORKSPACES} more touched first (the process's code compiled; reported apart); each touched once, 8 at a time: GET discovery (loads the instance: its state and keys, one read; its settings wait for a page), then one client-credentials token (its first token: p50/p95; server CPU per workspace); RSS read from /proc once the idle server settled (sampled every second, at least 5 s, until 3 samples agree within 1 MiB; RssAnon excludes mapped files); then client-credentials tokens for --seconds over --connections, each of a workspace at random among all, vs the same load on one workspace, after a warm-up of each (10 s at random unless --warmup: the steady state, every workspace asked), in --pairs (9) alternated pairs of windows; random/single is the median of the ratios of the pairs`,
    maxRssMiB: 400,
    maxFirstTokenP95Ms: 10,
    minRandomRatio: 0.7,
    concurrency: 8,
    ...(store ? { store } : {}),
  }
}

const scenarios: Record<string, Scenario> = {
  memory: memoryScenario(),
  'memory-postgres': memoryScenario('postgres'),
  'memory-stores': {
    kind: 'memory-stores',
    description: `the memory scenario's ${workspaceCount} active workspaces on a gatehouse node on PostgreSQL (a fresh database of a local throwaway cluster, fsync off, on this machine) and one on SQLite, both up at once, measured in turns: is the PostgreSQL node within 10% of the SQLite node?`,
    method: `both nodes' workspaces created alike through their API and their first ${PROCESS_WARMUP_WORKSPACES} workspaces touched (not counted); then every workspace touched once (discovery, then its first token, 8 at a time) in chunks of ${MEMORY_STORES_CHUNK}, the nodes taking turns (SQLite, PostgreSQL, PostgreSQL, SQLite, …): the touch pace's ratio is the median of the chunk pairs', the first-token p95 of each node over all its chunks; then RSS of each once settled; then tokens at random over all workspaces for --seconds over --connections, after a warm-up of each (10 s unless --warmup), in --pairs (9) turns of the two nodes, each window after 1 s of the same load unmeasured (its connections idled through the other's turn): the rate's ratio is the median of the pairs'. Each ratio is PostgreSQL's figure over SQLite's where more is better (pace, rate), SQLite's over PostgreSQL's where less is (p95, RSS). CPU per workspace of the touch, the database's counted apart`,
    minRatio: 0.9,
    concurrency: 8,
    chunk: MEMORY_STORES_CHUNK,
  },
  healthz: {
    description: 'GET /healthz through the full middleware stack vs a bare Bun.serve hello handler',
    minRatio: 0.5,
    unit: 'req/s',
    baseline: bareHello,
    subject: {
      name: 'gatehouse: healthz',
      async start() {
        const gh = await startGatehouse()
        return getTarget(`${gh.url}/healthz`, gh.pid, gh.stop)
      },
    },
  },
  discovery: {
    description:
      'GET {issuer}/.well-known/openid-configuration of a workspace instance through the full server (answered from the bridge cache after the first request: request id, security headers, access log) vs a bare Bun.serve handler, asked the same path, answering the same bytes with the headers oidc-provider answers with them (content type, CORS), fetched once from a workspace instance set up alike',
    minRate: 10_000,
    minRatio: 0.8,
    unit: 'req/s',
    baseline: bareBytes('/.well-known/openid-configuration', 'discovery'),
    subject: {
      name: 'gatehouse: discovery',
      async start() {
        const { gh, url } = await gatehouseWithWorkspace('/.well-known/openid-configuration')
        return getTarget(url, gh.pid, gh.stop)
      },
    },
  },
  jwks: {
    description:
      'GET {issuer}/jwks of a workspace instance through the full server (answered from the bridge cache after the first request: request id, security headers, access log) vs a bare Bun.serve handler, asked the same path, answering the same bytes with the headers oidc-provider answers with them (content type, CORS), fetched once from a workspace instance set up alike',
    minRatio: 0.8,
    unit: 'req/s',
    baseline: bareBytes('/jwks', 'JWKS'),
    subject: {
      name: 'gatehouse: jwks',
      async start() {
        const { gh, url } = await gatehouseWithWorkspace('/jwks')
        return {
          ...getTarget(url, gh.pid, gh.stop),
          async verify() {
            const { keys } = (await (await fetch(url)).json()) as { keys: { alg?: string; d?: string }[] }
            if (!keys.length || keys.some((k) => k.d !== undefined))
              throw new Error(`${url}: unexpected JWKS`)
            return `JWKS: ${keys.map((k) => k.alg).join(', ')} public keys`
          },
        }
      },
    },
  },
  'client-credentials': {
    description:
      'POST {issuer}/token grant_type=client_credentials (client_secret_basic, JWT/ES256 access tokens) for a web app of a workspace instance vs the same grant on a bare oidc-provider (node:http, in-memory adapter)',
    minRate: 2_000,
    // Issue 27: within 15% of the library itself on the same grant.
    minRatio: 0.85,
    unit: 'tokens/s',
    baseline: {
      name: 'bare oidc-provider',
      async start() {
        const clientId = 'bench-client'
        const clientSecret = randomBytes(32).toString('base64url')
        const s = await start([BUN, 'scripts/bench/baseline-oidc.ts'], {
          BENCH_CLIENT_ID: clientId,
          BENCH_CLIENT_SECRET: clientSecret,
        })
        return clientCredentialsTarget(`${s.url}/token`, clientId, clientSecret, s.proc.pid, () =>
          stopProcess(s.proc),
        )
      },
    },
    subject: {
      name: 'gatehouse: client-credentials',
      async start() {
        const { gh, ws, url } = await gatehouseWithWorkspace('/token')
        return clientCredentialsTarget(url, ws.clientId, ws.clientSecret, gh.pid, gh.stop)
      },
    },
  },
  'client-credentials-postgres': {
    description:
      'POST {issuer}/token grant_type=client_credentials (client_secret_basic, JWT/ES256 access tokens) for a web app of a workspace instance, one gatehouse node on PostgreSQL (a fresh database of a local throwaway cluster, fsync off, each run) vs the same on a gatehouse on SQLite (DATA_DIR); same entry point, env (JOB_WORKERS, LOG_LEVEL, pool defaults) and fixtures',
    minRatio: 0.7,
    unit: 'tokens/s',
    baseline: {
      name: 'gatehouse on SQLite',
      async start() {
        const { gh, ws, url } = await gatehouseWithWorkspace('/token')
        return clientCredentialsTarget(url, ws.clientId, ws.clientSecret, gh.pid, gh.stop)
      },
    },
    subject: {
      name: 'gatehouse on PostgreSQL',
      async start() {
        const { gh, ws, url, databasePid } = await gatehouseWithWorkspace('/token', { store: 'postgres' })
        return { ...clientCredentialsTarget(url, ws.clientId, ws.clientSecret, gh.pid, gh.stop), databasePid }
      },
    },
  },
  'sign-in': {
    description: `hosted password sign-ins of a workspace instance through the full server, each a whole flow with its own cookie jar: GET {issuer}/auth (code, PKCE S256, state) → 303 to the interaction → GET the sign-in page → POST its form (email, password) to …/login → 303 to the resume → GET it → 303 to the app's redirect URI with a code (read, not followed); vs the bound, argon2id verifies of the same hash (Bun.password.verify, the product's parameters) in a child process`,
    method: `sign-ins/s counts flows that ended at the redirect URI with a code (latencies are per flow); --connections flows at once, each with an account of its own (all signed up on the hosted pages with one password of ${SIGN_IN_PASSWORD.length} characters, the workspace's login policy not asking for a verified address); verifies/s runs as many verifies at once as there are CPUs (${availableParallelism()}). Ratio = sign-ins/s / verifies/s: the share of the sign-in path's time spent in the hash; cpu cost ratio = CPU per verify / server CPU per sign-in`,
    minRatio: 0.8,
    unit: 'sign-ins/s',
    baseline: hashBound,
    subject: { name: 'gatehouse: sign-in', start: () => startSignIns() },
  },
  'sign-in-metering': {
    description:
      "the sign-in scenario's hosted password sign-ins with billing's MAU metering on (Stripe configured: each finished sign-in upserts the user's row of the month; none is new after the first flow of each account) vs the same server without billing (no metering)",
    method:
      'sign-ins/s of the same flows, same fixtures, separate processes; ratio = metering on / metering off',
    minRatio: 0.95,
    unit: 'sign-ins/s',
    baseline: { name: 'gatehouse: sign-in, metering off', start: () => startSignIns() },
    subject: { name: 'gatehouse: sign-in, metering on', start: () => startSignIns(METERING_ON) },
  },
  'job-claims': {
    kind: 'jobs',
    description: `no-op jobs (${BENCH_JOB_KIND}, scripts/bench/bench-jobs.ts) claimed and run by ${JOB_NODES} serve nodes on one PostgreSQL database (distinct NODE_ID, JOB_WORKERS=${JOB_WORKERS} each: FOR UPDATE SKIP LOCKED claims with a lease), each job exactly once`,
    method: `per round: ${jobCount} jobs due now inserted in one statement while the nodes idle, then polled every ${JOB_POLL_MS} ms until all are done; rate = jobs / (last done − first done, the rows' updated_at), the wall time from the insert's commit (up to 1 s of waiting for the nodes' next tick included) printed beside it; exactly once = every job done with attempts 1, none dead or retried. A warm-up batch of ${JOB_WARMUP} jobs first; the median of --rounds is reported; every round's rows are deleted before the next`,
    minRate: 1_000,
    subject: { name: `${JOB_NODES} nodes on PostgreSQL`, start: () => startJobNodes('postgres', JOB_NODES) },
    comparison: { name: '1 node on SQLite', start: () => startJobNodes('sqlite', 1) },
  },
  'apps-list': {
    description: `GET /v1/workspaces/{id}/apps with a dashboard session cookie (session lookup, owner-scoped workspace lookup, ${APPS_LISTED} apps) through the full server vs a bare Bun.serve hello handler`,
    minRate: 5_000,
    unit: 'req/s',
    baseline: bareHello,
    subject: { name: 'gatehouse: apps-list', start: () => startAppsList('session') },
  },
  'apps-list-limiter': {
    description: `GET /v1/workspaces/{id}/apps with a dashboard session cookie (${APPS_LISTED} apps), the control-plane limiter on (every call takes from its workspace's and its organisation's buckets, at limits it never reaches) vs the same server with the limiter off (RATE_LIMIT_*=0)`,
    method: 'req/s of the same route, same fixtures, separate processes; ratio = limiter on / limiter off',
    minRatio: 0.95,
    unit: 'req/s',
    baseline: {
      name: 'gatehouse: limiter off',
      start: () => startAppsList('session', { env: LIMITER_OFF }),
    },
    subject: { name: 'gatehouse: limiter on', start: () => startAppsList('session') },
  },
  'machine-key-exchange': {
    description:
      'POST /v1/auth/token grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer (RFC 7523, form-encoded), each with a fresh ES256 assertion of a machine key created through the API (the rate-limit bucket of the client address, key lookup, signature and claims, a single-use jti row, last_used_at, an ES256 access token) through the full server on SQLite vs the crypto floor: a bare Bun.serve handler verifying the same kind of assertion and signing the same kind of token with jose, jti single use in memory (no framework, store or log)',
    method: `exchanges/s counts 200 answers with an access_token (p50/p95/p99 per exchange). Every request spends an assertion signed before its load, outside the measured window (unique jti, exp = iat + 3600): the load's seconds × ${EXCHANGE_POOL.headroom} × the best rate seen (at least ${EXCHANGE_POOL.minRate}/s). Ratio = gatehouse / floor. Target 0.4: the floor is HTTP and the two ES256 operations (about 120 µs of server CPU per exchange here); the product must also make a durable write per exchange, the jti row (RFC 7523 §3, about 60 µs on SQLite), take from the client address's rate-limit bucket (SPEC "Rate limits"), read the key, and run its framework and access log (30-50 µs): about 300 µs, a ratio of 0.4. Below it, an exchange spends on something neither asks for`,
    minRate: 3_000,
    minRatio: 0.4,
    unit: 'exchanges/s',
    baseline: bareExchange,
    subject: {
      name: 'gatehouse: exchange',
      async start() {
        const { gh, session, ws } = await gatehouseWithOwnedWorkspace(1)
        try {
          const file = await createMachineKey(gh.url, session, ws.workspaceId, ['workspace:read'])
          return machineExchangeTarget(await AssertionPool.of(file, EXCHANGE_POOL), gh.pid, gh.stop)
        } catch (e) {
          await gh.stop()
          throw e
        }
      },
    },
  },
  'scoped-read-machine-vs-session': {
    description: `GET /v1/workspaces/{id}/apps (scope workspace:read, ${APPS_LISTED} apps) with Authorization: Bearer <a machine key's access token from POST /v1/auth/token> (ES256 JWT verified locally, the workspace by id) vs the same read with the owner's dashboard session cookie (session and account, then workspace and role, from the store); the same gatehouse build on SQLite in separate processes, set up alike (a session, the workspace, a machine key exchanged once)`,
    minRatio: 0.9,
    unit: 'req/s',
    baseline: {
      name: 'gatehouse: session cookie',
      start: () => startAppsList('session', { seedKey: true }),
    },
    subject: { name: 'gatehouse: machine token', start: () => startAppsList('machine token') },
  },
  provisioning: {
    kind: 'latency',
    description: `POST /v1/workspaces with a dashboard session, then GET /v1/workspaces/{id} every ${PROVISION_POLL_MS} ms until state active; ${PROVISION_COUNT} workspaces one after another (the job worker creates each one's RS256 and ES256 signing keys)`,
    method: `one sample per workspace, POST sent → first GET answering active received (so up to one ${PROVISION_POLL_MS} ms poll interval of waiting is included); no warm-up; any workspace ending provisioning_failed or taking > ${PROVISION_TIMEOUT_MS / 1000} s fails the run`,
    maxP95Ms: 500,
    subject: {
      name: 'gatehouse: provisioning',
      async run() {
        const gh = await startGatehouse()
        try {
          const api = new Api(gh.url)
          const session = await api.signUpOwner()
          printSetup('the platform account', api)
          const list = await fetch(`${gh.url}/v1/workspaces`, { headers: { cookie: session.cookie } })
          const problem = expectTotal(0)(list.status, await list.text())
          if (problem) throw new Error(`GET /v1/workspaces with the bench session: ${problem}`)
          const done = cpuWindow(gh.pid)
          const t0 = performance.now()
          const r = await measureProvisioning(gh.url, session, {
            count: PROVISION_COUNT,
            pollMs: PROVISION_POLL_MS,
            timeoutMs: PROVISION_TIMEOUT_MS,
          })
          const cpu = done()
          const ms = (p: Percentiles, digits = 1) =>
            `p50 ${p.p50.toFixed(digits)} ms, p95 ${p.p95.toFixed(digits)} ms, max ${p.max.toFixed(digits)} ms`
          return {
            samples: r.total,
            count: r.count,
            unit: 'workspaces',
            details: [
              `POST /v1/workspaces → 201: ${ms(r.post)}`,
              `server side, created_at → updated_at of the row as it became active: ${ms(r.server, 0)}`,
              `GETs per workspace until active: p50 ${r.polls.p50}, max ${r.polls.max}`,
            ],
            cpu,
            seconds: (performance.now() - t0) / 1000,
          }
        } finally {
          await gh.stop()
        }
      },
    },
  },
  'webhook-deliveries': {
    kind: 'latency',
    description: `${WEBHOOK_EVENTS} tenants created with POST …/tenants:batch, ${WEBHOOK_BATCH} a batch (each batch one transaction: tenants, their tenant.created events, deliveries and jobs), one after another, to ${WEBHOOK_ENDPOINTS} endpoints of one workspace (it and they created through the API) on loopback receivers in the bench process: ${WEBHOOK_EVENTS * WEBHOOK_ENDPOINTS} signed POSTs by the server's job worker (JOB_WORKERS=1, JOB_CONCURRENCY=64; two workers measured slower on SQLite: they queue on its one write lock), the per-endpoint cap raised out of reach, on SQLite`,
    method:
      'one sample per delivery: the batch that made its event sent → its POST received; the rate counts distinct deliveries between the first and the last receipt; lost = expected − received, and every row must end delivered',
    maxP95Ms: 30_000,
    minRate: 1_000,
    subject: {
      name: 'gatehouse: webhook deliveries',
      async run() {
        const gh = await startGatehouse({
          env: {
            WEBHOOKS_ALLOW_HTTP: 'true',
            WEBHOOKS_ALLOW_PRIVATE: 'true',
            WEBHOOK_RATE_PER_MINUTE: '1000000',
            WEBHOOK_ENDPOINT_CONCURRENCY: '64',
            JOB_CONCURRENCY: '64',
          },
        })
        try {
          const done = cpuWindow(gh.pid)
          const r = await runDeliveries(gh.url, {
            endpoints: WEBHOOK_ENDPOINTS,
            events: WEBHOOK_EVENTS,
            batch: WEBHOOK_BATCH,
            timeoutMs: 180_000,
          })
          const lost = r.expected - r.received
          if (lost > 0 || r.delivered !== r.expected)
            throw new Error(
              `${lost} of ${r.expected} deliveries lost; ${r.delivered} rows delivered (${r.duplicates} duplicates)`,
            )
          return {
            samples: summarize(r.latencies),
            count: r.received,
            unit: 'deliveries',
            details: [
              `${r.received} of ${r.expected} received, 0 lost, ${r.duplicates} twice; ${r.delivered} rows delivered`,
              `${r.rate.toFixed(0)} deliveries/s between the first and the last receipt; ${r.seconds.toFixed(1)} s from the first batch sent to the last receipt`,
              `the API (setup, batches, delivery counts): ${r.setup}`,
            ],
            cpu: done(),
            seconds: r.seconds,
            rate: r.rate,
          }
        } finally {
          await gh.stop()
        }
      },
    },
  },
  'tenants-batch': {
    kind: 'latency',
    description: `POST /v1/workspaces/{id}/tenants:batch with ${BATCH_ITEMS} new tenants each (every one created with its tenant.created event and audit row), ${BATCH_COUNT} batches one after another with a dashboard session, on SQLite`,
    method: `one sample per batch, request sent → 200 received, every item checked created; no warm-up; the batch limit is out of reach (RATE_LIMIT_BATCH_PER_MINUTE at its maximum)`,
    maxP95Ms: 100,
    subject: {
      name: 'gatehouse: tenants:batch',
      async run() {
        const { gh, session, ws } = await gatehouseWithOwnedWorkspace(1)
        try {
          const url = `${gh.url}/v1/workspaces/${ws.workspaceId}/tenants:batch`
          const headers = {
            cookie: session.cookie,
            'x-csrf-token': session.csrfToken,
            'content-type': 'application/json',
          }
          const samples: number[] = []
          const done = cpuWindow(gh.pid)
          const t0 = performance.now()
          for (let b = 0; b < BATCH_COUNT; b++) {
            const items = Array.from({ length: BATCH_ITEMS }, (_, i) => ({
              slug: `t-${b}-${i}`,
              name: `Tenant ${b}.${i}`,
            }))
            const started = performance.now()
            const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(items) })
            const body = (await res.json()) as { created?: number }
            samples.push(performance.now() - started)
            if (res.status !== 200 || body.created !== BATCH_ITEMS)
              throw new Error(`batch ${b} answered ${res.status}: ${JSON.stringify(body).slice(0, 300)}`)
          }
          return {
            samples: summarize(samples),
            count: BATCH_COUNT,
            unit: 'batches',
            details: [
              `${BATCH_COUNT * BATCH_ITEMS} tenants created in ${BATCH_COUNT} batches of ${BATCH_ITEMS}`,
            ],
            cpu: done(),
            seconds: (performance.now() - t0) / 1000,
          }
        } finally {
          await gh.stop()
        }
      },
    },
  },
  'mcp-connect': mcpConnectScenario(startGatehouse),
  fuzz: {
    kind: 'fuzz',
    description:
      'hostile requests (bodies, headers, cookies, path ids) over every route of /openapi.json, the dashboard forms and the identity endpoints of the platform instance and a workspace instance, with the dashboard session of an account signed up on the hosted pages',
    async run(opts) {
      const gh = await startGatehouse()
      try {
        const api = new Api(gh.url)
        const session = await api.signUpOwner()
        const fuzzed = await api.createWorkspace(session)
        const identity = await api.createWorkspace(session)
        const foreign = await api.createWorkspace(await api.signUpOwner())
        printSetup('the workspaces', api)
        const apps = (await (
          await fetch(`${gh.url}/v1/workspaces/${fuzzed.workspaceId}/apps`, {
            headers: { cookie: session.cookie },
          })
        ).json()) as { items: { id: string }[] }
        const [cookieName, cookie] = session.cookie.split(/=(.*)/s) as [string, string]
        const done = cpuWindow(gh.pid)
        const report = await runFuzz(
          {
            baseUrl: gh.url,
            routes: await loadRoutes(gh.url),
            session: { cookieName, cookie, csrf: session.csrfToken },
            ids: {
              workspace: [fuzzed.workspaceId],
              foreignWorkspace: [foreign.workspaceId],
              app: apps.items.map((a) => a.id),
            },
            instances: [
              { id: 'platform', clientId: 'gatehouse-console', redirectUri: `${gh.url}/v1/auth/callback` },
              { id: identity.workspaceId, clientId: identity.clientId, redirectUri: 'https://rp.example/cb' },
            ],
          },
          opts,
        )
        return { report, cpu: done() }
      } finally {
        await gh.stop()
      }
    },
  },
}

interface Measured {
  load: CheckedLoadResult
  cpu: CpuUsage
  /** Server CPU microseconds per successful request. */
  cpuPerRequest: number | null
  /** The target's unit (`req/s` unless it named one). */
  unit: string
}

const cores = (cpuSeconds: number | null, wall: number) =>
  cpuSeconds === null ? 'n/a' : `${(cpuSeconds / wall).toFixed(2)} cores`

/** The load of a target for `seconds`: its own (`run`), or its checked requests. */
function loadOf(target: Target, seconds: number): Promise<CheckedLoadResult> {
  const opts = { seconds, connections }
  if (target.run) return target.run(opts)
  if (!target.make || !target.check) throw new Error('a target needs run, or make and check')
  return runCheckedLoad(target.make, target.check, opts)
}

/**
 * A ratio to two places, or to as many more as keep it on its side of its target (a ratio of 0.796
 * printed `MISSED (0.80)` read as a contradiction).
 */
function ratioText(ratio: number, target: number): string {
  for (let places = 2; places < 6; places++) {
    const text = ratio.toFixed(places)
    if (Number(text) >= target === ratio >= target) return text
  }
  return String(ratio)
}

/** `sign-ins/s` → `sign-in`, `verifies/s` → `verify`, `req/s` → `req`. */
const singular = (unit: string) =>
  unit
    .replace(/\/s$/, '')
    .replace(/ies$/, 'y')
    .replace(/(ch|sh|x)es$/, '$1')
    .replace(/s$/, '')

/** A side's target, started, checked and warmed up, kept up for every window of the run. */
interface Opened {
  target: Target
  label: string
}

/** Starts one side, checks it and warms it up. */
async function open(side: Side, label: string): Promise<Opened> {
  const target = await side.start()
  try {
    const note = await target.verify?.()
    if (note) console.log(`  ${label}: ${note}`)
    await warm(target, warmup)
  } catch (e) {
    await target.stop()
    throw e
  }
  return { target, label }
}

/** An unmeasured load of `s` seconds (with what it needs prepared first). */
async function warm(target: Target, s: number): Promise<void> {
  if (s <= 0) return
  await target.prepare?.(s)
  await loadOf(target, s)
}

/**
 * A load of half a second before each window: the side idled while the other was measured, its
 * connections may have been closed (Bun.serve closes idle ones after 10 s: the first request on one
 * fails) and the machine's caches hold the other's. Unmeasured, its errors ignored.
 */
const REWARM_S = 0.5

/** Measures one window of an opened side, after its re-warm. */
async function measure({ target, label }: Opened): Promise<Measured> {
  await warm(target, REWARM_S)
  const prepared = await target.prepare?.(seconds)
  if (prepared) console.log(`  ${label}: ${prepared}`)
  const done = cpuWindow(target.pid, { databasePid: target.databasePid })
  const load = await loadOf(target, seconds)
  const cpu = done()
  const served = load.requests - load.errors
  const perRequest = (s: number | null) => (s !== null && served > 0 ? (s / served) * 1e6 : null)
  // The database's CPU is part of what a request costs the server side.
  const cpuPerRequest = perRequest(cpu.server === null ? null : cpu.server + (cpu.database ?? 0))
  const unit = target.unit ?? 'req/s'
  const us = (v: number | null) => (v === null ? 'n/a' : `${v.toFixed(0)} µs/${singular(unit)}`)
  console.log(formatLoad(label, load, unit))
  for (const [kind, count] of load.errorKinds) console.log(`  error ×${count}: ${kind}`)
  const database =
    target.databasePid === undefined
      ? ''
      : `, database ${us(perRequest(cpu.database))} (${cores(cpu.database, load.seconds)}), server + database ${us(cpuPerRequest)}`
  console.log(
    `  cpu: server ${us(perRequest(cpu.server))} (${cores(cpu.server, load.seconds)})${database}, load generator ${cores(cpu.driver, load.seconds)}, other processes ${cores(cpu.others, load.seconds)}`,
  )
  return { load, cpu, cpuPerRequest, unit }
}

const name = positional[0] ?? 'healthz'
const scenario = scenarios[name]
if (!scenario) {
  console.error(`unknown scenario "${name}"; known: ${Object.keys(scenarios).join(', ')}`)
  process.exit(2)
}
try {
  if (scenario.kind === 'latency') await runLatency(name, scenario)
  else if (scenario.kind === 'memory') await runMemory(name, scenario)
  else if (scenario.kind === 'memory-stores') await runMemoryStores(name, scenario)
  else if (scenario.kind === 'fuzz') await runFuzzScenario(name, scenario)
  else if (scenario.kind === 'jobs') await runJobs(name, scenario)
  else await runThroughput(name, scenario)
} finally {
  await stopPostgres()
}
process.exit(process.exitCode ?? 0)

async function runThroughput(name: string, scenario: ThroughputScenario) {
  const targets = [
    scenario.minRate !== undefined ? `>= ${scenario.minRate} ${scenario.unit}` : null,
    scenario.minRatio !== undefined ? `ratio >= ${scenario.minRatio.toFixed(2)}` : null,
  ].filter(Boolean)
  console.log(`scenario ${name}: ${scenario.description}`)
  console.log(
    `${seconds} s per measurement after ${warmup} s of warm-up, ${connections} connections, gatehouse LOG_LEVEL=${logLevel}, target ${targets.join(' and ') || 'none (informational)'}`,
  )
  console.log(
    scenario.method ?? 'req/s counts responses that passed the check; p50/p95/p99 are per-request latencies',
  )
  // Both sides up, warmed up once; then baseline, then (subject, baseline) per round, window after
  // window: each subject window is compared with the mean of the baseline windows just before and
  // after it, and the median round is reported.
  const base = await open(scenario.baseline, `baseline: ${scenario.baseline.name}`)
  const sides = [base]
  try {
    sides.push(await open(scenario.subject, scenario.subject.name))
    await runRounds(scenario, base, sides[1]!)
  } finally {
    for (const side of sides) await side.target.stop()
  }
}

async function runRounds(scenario: ThroughputScenario, base: Opened, subjectSide: Opened) {
  const baselines = [await measure(base)]
  const rounds: { subject: Measured; ratio: number; cost: number | null }[] = []
  for (let r = 0; r < roundCount; r++) {
    const measured = await measure(subjectSide)
    const after = await measure(base)
    const before = baselines[baselines.length - 1]!
    baselines.push(after)
    const baselineRps = (before.load.rps + after.load.rps) / 2
    const spread = Math.abs(before.load.rps - after.load.rps) / baselineRps
    const cpus = [before.cpuPerRequest, after.cpuPerRequest, measured.cpuPerRequest]
    const cost = cpus.every((c) => c !== null)
      ? (before.cpuPerRequest! + after.cpuPerRequest!) / 2 / measured.cpuPerRequest!
      : null
    const ratio = measured.load.rps / baselineRps
    rounds.push({ subject: measured, ratio, cost })
    console.log(
      `round ${r + 1}: ratio ${ratio.toFixed(2)} (${scenario.subject.name} ${formatRate(measured.load.rps)} ${measured.unit} / mean of the baselines around it ${formatRate(baselineRps)} ${after.unit}, which differ by ${(spread * 100).toFixed(1)}%)${cost === null ? '' : `; cpu cost ratio ${cost.toFixed(2)} (baseline µs per ${singular(after.unit)} / ${scenario.subject.name} µs per ${singular(measured.unit)})`}`,
    )
  }
  const median = [...rounds].sort((x, y) => x.ratio - y.ratio)[Math.floor(rounds.length / 2)]!
  const subject = median.subject.load
  const ratio = median.ratio
  if (rounds.length > 1) {
    console.log(`rounds' ratios: ${rounds.map((r) => r.ratio.toFixed(2)).join(', ')}`)
  }
  console.log(
    `ratio ${ratio.toFixed(2)} (${rounds.length > 1 ? 'median round, ' : ''}${scenario.subject.name} ${median.subject.unit} / mean baseline ${baselines[0]!.unit})`,
  )
  if (scenario.minRate !== undefined) {
    const met = subject.rps >= scenario.minRate
    console.log(
      `target >= ${scenario.minRate} ${scenario.unit}: ${met ? 'met' : 'MISSED'} (${subject.rps.toFixed(0)} ${scenario.unit})`,
    )
  }
  if (scenario.minRatio !== undefined) {
    const met = ratio >= scenario.minRatio
    console.log(
      `target ratio >= ${scenario.minRatio.toFixed(2)}: ${met ? 'met' : 'MISSED'} (${ratioText(ratio, scenario.minRatio)})`,
    )
  }
  if (subject.errors > 0)
    console.log(`${scenario.subject.name} answered ${subject.errors} requests with errors (listed above)`)
}

/** The median of `values` (the upper one of an even count). */
function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number
}

function mib(r: Resident | null): string {
  return r ? `RSS ${r.rss.toFixed(0)} MiB (anon ${r.anon.toFixed(0)} MiB)` : 'RSS n/a'
}

function fmtMs(p: Percentiles): string {
  return `p50 ${p.p50.toFixed(1)} ms   p95 ${p.p95.toFixed(1)} ms   max ${p.max.toFixed(1)} ms`
}

/** A node of the memory scenarios, its workspaces created, its process's own first ones touched. */
interface MemoryNode {
  /** `SQLite` or `PostgreSQL`, for the lines printed. */
  name: string
  gh: Gatehouse
  /** Its database, on PostgreSQL (the postmaster's pid, for its CPU). */
  pg: { url: string; postmaster: number } | null
  /** The workspaces no identity request asked yet. */
  workspaces: BenchWorkspace[]
}

/**
 * Starts a node on `store`, reads its idle RSS, creates --workspaces workspaces and
 * PROCESS_WARMUP_WORKSPACES more through its API, and touches the latter (its code compiled meanwhile); prints each
 * step. The caller stops `gh`, also when this throws after it started.
 */
async function memoryNode(
  store: 'sqlite' | 'postgres',
  concurrency: number,
  started: (gh: Gatehouse) => void = () => {},
): Promise<MemoryNode> {
  const name = store === 'postgres' ? 'PostgreSQL' : 'SQLite'
  const pg = store === 'postgres' ? await freshPostgresDatabase() : null
  const gh = await startGatehouse(pg ? { databaseUrl: pg.url, nodeId: 'bench-node-1' } : {})
  started(gh)
  const idle = await settledResident(gh.pid, 10)
  console.log(`${name} node idle: ${mib(idle.at)}`)
  const t = performance.now()
  const api = new Api(gh.url)
  const owner = await api.signUpOwner()
  const created = await api.createWorkspaces(owner, workspaceCount + PROCESS_WARMUP_WORKSPACES, {
    concurrency: CREATION_CONCURRENCY,
  })
  const took = (performance.now() - t) / 1000
  console.log(
    `${name}: created ${created.length} workspaces through the API in ${took.toFixed(1)} s (${(created.length / took).toFixed(1)}/s, ${CREATION_CONCURRENCY} at a time, each until active, then its web app)`,
  )
  printSetup(`${name}'s workspaces`, api)
  // What the creation left behind (its job thread's provisioning, the control plane's pages of the
  // store): part of what the node holds before any instance is loaded.
  console.log(`${name} node after the creation: ${mib((await settledResident(gh.pid, 30)).at)} settled`)
  const firstOfProcess = await touchAll(created.slice(0, PROCESS_WARMUP_WORKSPACES), concurrency, gh.pid)
  console.log(
    `${name}: the process's first ${PROCESS_WARMUP_WORKSPACES} workspaces (its code compiled meanwhile; not counted below): first token ${fmtMs(firstOfProcess.firstToken)}`,
  )
  return { name, gh, pg, workspaces: created.slice(PROCESS_WARMUP_WORKSPACES) }
}

async function runMemory(name: string, scenario: MemoryScenario) {
  console.log(`scenario ${name}: ${scenario.description}`)
  console.log(`gatehouse LOG_LEVEL=${logLevel}, ${seconds} s of load over ${connections} connections`)
  console.log(scenario.method)
  let started: Gatehouse | undefined
  try {
    const { gh, pg, workspaces } = await memoryNode(scenario.store ?? 'sqlite', scenario.concurrency, (g) => {
      started = g
    })
    const touchCpu = cpuWindow(gh.pid, { databasePid: pg?.postmaster })
    const touched = await touchAll(workspaces, scenario.concurrency, gh.pid)
    const touchSpent = touchCpu()
    console.log(`touched ${workspaces.length} workspaces in ${touched.seconds.toFixed(1)} s`)
    console.log(`  discovery, cold instance     ${fmtMs(touched.discovery)}`)
    console.log(`  first token of an instance   ${fmtMs(touched.firstToken)}`)
    const perWorkspace = (cpu: number | null) =>
      cpu === null ? 'n/a' : `${((cpu / workspaces.length) * 1e6).toFixed(0)} µs per workspace`
    console.log(
      `  cpu: server ${perWorkspace(touchSpent.server)} (its discovery and first token)${pg ? `, database ${perWorkspace(touchSpent.database)}` : ''}, the bench ${perWorkspace(touchSpent.driver)}`,
    )
    for (const [kind, count] of touched.errors) console.log(`  error ×${count}: ${kind}`)
    console.log(
      `  RSS while touching: ${touched.growth.map((g) => `${g.touched}: ${g.rss.toFixed(0)}`).join(', ')} MiB`,
    )
    const peak = resident(gh.pid)
    const settled = await settledResident(gh.pid, 30)
    console.log(
      `after touching all: ${mib(peak)} at once, ${mib(settled.at)} settled after ${settled.seconds} s idle`,
    )

    const loadAt = async (label: string, list: BenchWorkspace[]) => {
      const done = cpuWindow(gh.pid)
      const load = await randomTokenLoad(list, { seconds, connections })
      const cpu = done()
      console.log(formatLoad(label, load))
      for (const [kind, count] of load.errorKinds) console.log(`  error ×${count}: ${kind}`)
      const served = load.requests - load.errors
      console.log(
        `  cpu: server ${cpu.server === null || served === 0 ? 'n/a' : `${((cpu.server / served) * 1e6).toFixed(0)} µs/req`}`,
      )
      return load
    }
    const one = workspaces.slice(0, 1)
    if (memoryWarmup > 0) {
      await randomTokenLoad(workspaces, { seconds: memoryWarmup, connections })
      await randomTokenLoad(one, { seconds: Math.min(memoryWarmup, 2), connections })
    }
    // The two loads alternate (random, one, one, random, …) and each pair gives a ratio: this
    // machine's speed drifts by a third within minutes, more than the ratio measured.
    const pairs: { random: CheckedLoadResult; single: CheckedLoadResult }[] = []
    let afterRandom = resident(gh.pid)
    for (let i = 0; i < memoryPairs; i++) {
      const randomLoad = () => loadAt(`tokens, random of ${workspaces.length}`, workspaces)
      const singleLoad = () => loadAt('tokens, one workspace', one)
      if (i % 2 === 0) {
        const random = await randomLoad()
        afterRandom = resident(gh.pid)
        pairs.push({ random, single: await singleLoad() })
      } else {
        const single = await singleLoad()
        pairs.push({ single, random: await randomLoad() })
        afterRandom = resident(gh.pid)
      }
    }
    console.log(`after the loads: ${mib(afterRandom)} (after a random one), ${mib(resident(gh.pid))}`)
    const ratios = pairs.map((p) => p.random.rps / p.single.rps)
    const ratio = median(ratios)
    const random = { rps: median(pairs.map((p) => p.random.rps)), errors: 0 }
    const single = { rps: median(pairs.map((p) => p.single.rps)), errors: 0 }
    for (const p of pairs) {
      random.errors += p.random.errors
      single.errors += p.single.errors
    }
    console.log(
      `random / single: ${ratio.toFixed(2)}, median of ${pairs.length} alternated pairs (${ratios.map((r) => r.toFixed(2)).join(', ')}; median rates ${formatRate(random.rps)} / ${formatRate(single.rps)} req/s)`,
    )
    const rss = settled.at?.rss ?? Number.NaN
    const line = (met: boolean, what: string) => console.log(`target ${what}: ${met ? 'met' : 'MISSED'}`)
    line(
      rss < scenario.maxRssMiB,
      `RSS < ${scenario.maxRssMiB} MiB after all were touched (${rss.toFixed(0)} MiB)`,
    )
    line(
      touched.firstToken.p95 < scenario.maxFirstTokenP95Ms,
      `first token p95 < ${scenario.maxFirstTokenP95Ms} ms (${touched.firstToken.p95.toFixed(1)} ms)`,
    )
    line(
      ratio >= scenario.minRandomRatio,
      `random / single >= ${scenario.minRandomRatio} (${ratio.toFixed(2)})`,
    )
    if (touched.errors.size > 0 || random.errors > 0 || single.errors > 0)
      console.log('some requests failed (listed above)')
  } finally {
    await started?.stop()
  }
}

async function runMemoryStores(name: string, scenario: MemoryStoresScenario) {
  console.log(`scenario ${name}: ${scenario.description}`)
  console.log(`gatehouse LOG_LEVEL=${logLevel}, ${seconds} s of load over ${connections} connections`)
  console.log(scenario.method)
  const running: Gatehouse[] = []
  try {
    const sqlite = await memoryNode('sqlite', scenario.concurrency, (g) => running.push(g))
    const postgres = await memoryNode('postgres', scenario.concurrency, (g) => running.push(g))
    const nodes = [sqlite, postgres]
    const tally = new Map(
      nodes.map((n) => [n, { firstTokenMs: [] as number[], seconds: 0, server: 0, database: 0, errors: 0 }]),
    )
    const paces: number[] = []
    for (let from = 0; from < workspaceCount; from += scenario.chunk) {
      const pace = new Map<MemoryNode, number>()
      for (const node of (from / scenario.chunk) % 2 === 0 ? nodes : [...nodes].reverse()) {
        const chunk = node.workspaces.slice(from, from + scenario.chunk)
        const cpu = cpuWindow(node.gh.pid, { databasePid: node.pg?.postmaster })
        const touched = await touchAll(chunk, scenario.concurrency, node.gh.pid)
        const spent = cpu()
        const t = tally.get(node)!
        t.firstTokenMs.push(...touched.firstTokenMs)
        t.seconds += touched.seconds
        t.server += spent.server ?? Number.NaN
        t.database += spent.database ?? 0
        for (const [kind, count] of touched.errors) {
          console.log(`  ${node.name}: error ×${count}: ${kind}`)
          t.errors += count
        }
        pace.set(node, chunk.length / touched.seconds)
      }
      paces.push(pace.get(postgres)! / pace.get(sqlite)!)
    }
    const firstToken = new Map(nodes.map((n) => [n, summarize(tally.get(n)!.firstTokenMs)]))
    for (const node of nodes) {
      const t = tally.get(node)!
      const perWorkspace = (cpu: number) => `${((cpu / workspaceCount) * 1e6).toFixed(0)} µs per workspace`
      console.log(
        `${node.name}: touched ${workspaceCount} workspaces in ${t.seconds.toFixed(1)} s; first token ${fmtMs(firstToken.get(node)!)}; cpu: server ${perWorkspace(t.server)}${node.pg ? `, database ${perWorkspace(t.database)}` : ''}`,
      )
    }
    const sq = tally.get(sqlite)!
    const pgTally = tally.get(postgres)!
    console.log(
      `touch CPU per workspace, SQLite / PostgreSQL: ${(sq.server / pgTally.server).toFixed(2)} the node alone, ${(sq.server / (pgTally.server + pgTally.database)).toFixed(2)} with its database (which shares this machine's cores)`,
    )
    console.log(`touch pace PostgreSQL / SQLite by chunk pair: ${paces.map((r) => r.toFixed(2)).join(', ')}`)
    const settled = new Map<MemoryNode, Resident | null>()
    for (const node of nodes) {
      const at = await settledResident(node.gh.pid, 30)
      settled.set(node, at.at)
      console.log(`${node.name}: after touching all, ${mib(at.at)} settled after ${at.seconds} s idle`)
    }
    for (const node of nodes) {
      if (memoryWarmup > 0) await randomTokenLoad(node.workspaces, { seconds: memoryWarmup, connections })
    }
    const rates: number[] = []
    for (let i = 0; i < memoryPairs; i++) {
      const rate = new Map<MemoryNode, number>()
      for (const node of i % 2 === 0 ? nodes : [...nodes].reverse()) {
        // Its keep-alive connections sat idle through the other node's turn, long enough for the
        // server to close them: opened again first, unmeasured (else a few ECONNRESET, not the node's).
        await randomTokenLoad(node.workspaces, { seconds: 1, connections })
        const cpu = cpuWindow(node.gh.pid, { databasePid: node.pg?.postmaster })
        const load = await randomTokenLoad(node.workspaces, { seconds, connections })
        const spent = cpu()
        const served = load.requests - load.errors
        console.log(
          `${formatLoad(`${node.name}: tokens, random of ${node.workspaces.length}`, load)}; cpu: server ${spent.server === null || served === 0 ? 'n/a' : `${((spent.server / served) * 1e6).toFixed(0)} µs/req`}`,
        )
        for (const [kind, count] of load.errorKinds) console.log(`  error ×${count}: ${kind}`)
        tally.get(node)!.errors += load.errors
        rate.set(node, load.rps)
      }
      rates.push(rate.get(postgres)! / rate.get(sqlite)!)
    }
    console.log(`random tokens PostgreSQL / SQLite by pair: ${rates.map((r) => r.toFixed(2)).join(', ')}`)
    const target = (what: string, ratio: number) =>
      console.log(
        `target ${what} >= ${scenario.minRatio}: ${ratio >= scenario.minRatio ? 'met' : 'MISSED'} (${ratioText(ratio, scenario.minRatio)})`,
      )
    target('touch pace PostgreSQL / SQLite, median chunk pair', median(paces))
    target('first token p95 SQLite / PostgreSQL', firstToken.get(sqlite)!.p95 / firstToken.get(postgres)!.p95)
    target(
      'settled RSS SQLite / PostgreSQL',
      (settled.get(sqlite)?.rss ?? Number.NaN) / (settled.get(postgres)?.rss ?? Number.NaN),
    )
    target('random tokens PostgreSQL / SQLite, median pair', median(rates))
    if (nodes.some((n) => tally.get(n)!.errors > 0)) console.log('some requests failed (listed above)')
  } finally {
    for (const gh of running) await gh.stop()
  }
}

async function runLatency(name: string, scenario: LatencyScenario) {
  console.log(`scenario ${name}: ${scenario.description}`)
  console.log(`gatehouse LOG_LEVEL=${logLevel}, target p95 < ${scenario.maxP95Ms} ms`)
  console.log(scenario.method)
  let m: LatencyMeasured
  try {
    m = await scenario.subject.run()
  } catch (e) {
    console.error(`${scenario.subject.name} FAILED: ${(e as Error).message}`)
    process.exit(1)
  }
  const { samples: s } = m
  console.log(
    `${scenario.subject.name.padEnd(28)} p50 ${s.p50.toFixed(1)} ms   p95 ${s.p95.toFixed(1)} ms   max ${s.max.toFixed(1)} ms   (${m.count} ${m.unit})`,
  )
  for (const line of m.details) console.log(`  ${line}`)
  const perOp =
    m.cpu.server === null
      ? 'n/a'
      : `${((m.cpu.server / m.count) * 1000).toFixed(1)} ms per ${singular(m.unit)}`
  console.log(
    `  cpu: server ${perOp} (${cores(m.cpu.server, m.seconds)}), load generator ${cores(m.cpu.driver, m.seconds)}, other processes ${cores(m.cpu.others, m.seconds)}`,
  )
  console.log('baseline: n/a (latency target)')
  const met = s.p95 < scenario.maxP95Ms
  console.log(`target p95 < ${scenario.maxP95Ms} ms: ${met ? 'met' : 'MISSED'} (p95 ${s.p95.toFixed(1)} ms)`)
  if (scenario.minRate !== undefined) {
    const rate = m.rate ?? 0
    console.log(
      `target >= ${scenario.minRate} ${m.unit}/s: ${rate >= scenario.minRate ? 'met' : 'MISSED'} (${rate.toFixed(0)} ${m.unit}/s)`,
    )
  }
}

async function runFuzzScenario(name: string, scenario: FuzzScenario) {
  const seed = Number(flag('seed') ?? Math.floor(Math.random() * 2 ** 31))
  const count = Number(flag('requests') ?? 20_000)
  console.log(`scenario ${name}: ${scenario.description}`)
  console.log(`${count} requests, seed ${seed}, ${connections} connections, gatehouse LOG_LEVEL=${logLevel}`)
  const { report, cpu } = await scenario.run({ seed, count, concurrency: connections })
  for (const line of formatReport(report, { perRoute: true })) console.log(line)
  console.log(
    `  cpu: server ${cores(cpu.server, report.seconds)}, load generator ${cores(cpu.driver, report.seconds)}, other processes ${cores(cpu.others, report.seconds)}`,
  )
  const fivexx = report.findings.filter((f) => f.status >= 500)
  console.log(
    `5xx: ${fivexx.length}${fivexx.length ? ` (${[...new Set(fivexx.map((f) => `${f.method} ${f.url}`))].join('; ')})` : ''}`,
  )
  const met = report.findings.length === 0
  console.log(
    `target no 5xx and no stack trace: ${met ? 'met' : 'MISSED'} (${report.findings.length} findings)`,
  )
}

interface JobRound {
  count: number
  /** Jobs per second between the first and the last job done (the rows' updated_at). */
  rate: number
  spanMs: number
  /** From the insert's commit to the last job done. */
  wallMs: number
  /** Empty when every job ran exactly once; else what was found instead. */
  problems: string[]
  /** Jobs run per node id (the first part of `locked_by`). */
  perNode: Map<string, number>
  cpu: CpuUsage
}

/** One batch: deletes the last one's rows, inserts `count` jobs, waits until none is left to run. */
async function jobRound(nodes: JobNodes, round: string, count: number): Promise<JobRound> {
  const { db } = nodes
  await db.query('DELETE FROM jobs WHERE kind = $1', [BENCH_JOB_KIND])
  if (db.dialect === 'postgres') await db.query('VACUUM ANALYZE jobs')
  const done = cpuWindow(nodes.pids, { databasePid: nodes.databasePid })
  await enqueueBenchJobs(db, round, count, Date.now())
  const committed = Date.now()
  // Generous: 50 jobs/s at least, and 30 s of slack.
  const deadline = committed + 30_000 + count * 20
  const tally = () =>
    db.query<{ status: string; attempts: number; n: number | string }>(
      'SELECT status, attempts, count(*) AS n FROM jobs WHERE kind = $1 GROUP BY status, attempts ORDER BY status, attempts',
      [BENCH_JOB_KIND],
    )
  const describe = (rows: Awaited<ReturnType<typeof tally>>) =>
    rows.map((r) => `${Number(r.n)} ${r.status} with attempts ${r.attempts}`).join(', ')
  for (;;) {
    const [left] = await db.query<{ n: number | string }>(
      "SELECT count(*) AS n FROM jobs WHERE kind = $1 AND status IN ('queued', 'running')",
      [BENCH_JOB_KIND],
    )
    if (Number(left?.n) === 0) break
    if (Date.now() > deadline) {
      throw new Error(
        `round ${round}: jobs still to run after ${((Date.now() - committed) / 1000).toFixed(0)} s: ${describe(await tally())}`,
      )
    }
    await Bun.sleep(JOB_POLL_MS)
  }
  const cpu = done()
  const rows = await tally()
  const [span] = await db.query<{ first: number; last: number }>(
    "SELECT min(updated_at) AS first, max(updated_at) AS last FROM jobs WHERE kind = $1 AND status = 'done'",
    [BENCH_JOB_KIND],
  )
  const owners = await db.query<{ locked_by: string | null; n: number | string }>(
    'SELECT locked_by, count(*) AS n FROM jobs WHERE kind = $1 GROUP BY locked_by',
    [BENCH_JOB_KIND],
  )
  const perNode = new Map<string, number>()
  for (const o of owners) {
    const node = o.locked_by?.split(':')[0] ?? '(none)'
    perNode.set(node, (perNode.get(node) ?? 0) + Number(o.n))
  }
  const exact =
    rows.length === 1 && rows[0]?.status === 'done' && rows[0].attempts === 1 && Number(rows[0].n) === count
  const first = Number(span?.first ?? committed)
  const last = Number(span?.last ?? committed)
  const spanMs = Math.max(1, last - first)
  return {
    count,
    rate: count / (spanMs / 1000),
    spanMs,
    wallMs: last - committed,
    problems: exact ? [] : [`${count} enqueued; found ${describe(rows)}`],
    perNode,
    cpu,
  }
}

/** Starts one side's nodes, runs the warm-up batch and the measured rounds, stops the nodes. */
async function measureJobs(side: { name: string; start(): Promise<JobNodes> }, roundsToRun: number) {
  console.log(`${side.name}${roundsToRun === 1 ? ' (one round)' : ''}:`)
  const nodes = await side.start()
  try {
    const warm = await jobRound(nodes, 'w', JOB_WARMUP)
    console.log(
      `  warm-up: ${warm.count} jobs, ${warm.rate.toFixed(0)} jobs/s${warm.problems.length ? `; NOT exactly once: ${warm.problems.join('; ')}` : ''}`,
    )
    const rounds: JobRound[] = [warm]
    for (let r = 1; r <= roundsToRun; r++) {
      const m = await jobRound(nodes, String(r), jobCount)
      rounds.push(m)
      const perNode = [...m.perNode].sort(([a], [b]) => a.localeCompare(b))
      const perJob = (cpu: number | null) =>
        cpu === null ? 'n/a' : `${((cpu / m.count) * 1e6).toFixed(0)} µs/job`
      const seconds = m.spanMs / 1000
      console.log(
        `  round ${r}: ${m.count} jobs done in ${seconds.toFixed(2)} s first to last: ${m.rate.toFixed(0)} jobs/s (${(m.count / (m.wallMs / 1000)).toFixed(0)} jobs/s over ${(m.wallMs / 1000).toFixed(2)} s from the insert's commit); per node ${perNode.map(([n, c]) => `${n} ${c}`).join(', ')}; exactly once: ${m.problems.length ? `NO (${m.problems.join('; ')})` : 'yes'}`,
      )
      const database =
        nodes.databasePid === undefined
          ? ''
          : `, database ${perJob(m.cpu.database)} (${cores(m.cpu.database, seconds)})`
      console.log(
        `    cpu: nodes ${perJob(m.cpu.server)} (${cores(m.cpu.server, seconds)})${database}, bench ${cores(m.cpu.driver, seconds)}, other processes ${cores(m.cpu.others, seconds)}`,
      )
    }
    const measured = rounds.slice(1)
    const median = [...measured].sort((a, b) => a.rate - b.rate)[Math.floor(measured.length / 2)]!
    if (measured.length > 1)
      console.log(`  rounds' rates: ${measured.map((m) => m.rate.toFixed(0)).join(', ')} jobs/s`)
    return {
      rate: median.rate,
      jobs: rounds.reduce((n, m) => n + m.count, 0),
      problems: rounds.flatMap((m) => m.problems),
      /** Rounds (warm-up included) in which some job did not run exactly once. */
      inexact: rounds.filter((m) => m.problems.length > 0).length,
      rounds: rounds.length,
    }
  } finally {
    await nodes.stop()
  }
}

async function runJobs(name: string, scenario: JobsScenario) {
  console.log(`scenario ${name}: ${scenario.description}`)
  console.log(
    `${jobCount} jobs per round, ${roundCount} rounds after a warm-up of ${JOB_WARMUP}, gatehouse LOG_LEVEL=${logLevel}, target >= ${scenario.minRate} jobs/s and every job exactly once`,
  )
  console.log(scenario.method)
  let subject: Awaited<ReturnType<typeof measureJobs>>
  let comparison: Awaited<ReturnType<typeof measureJobs>> | null = null
  try {
    subject = await measureJobs(scenario.subject, roundCount)
    // One measured round: the comparison is informational, and a deep SQLite backlog is slow.
    if (scenario.comparison) comparison = await measureJobs(scenario.comparison, 1)
  } catch (e) {
    console.error(`${name} FAILED: ${(e as Error).message}`)
    process.exitCode = 1
    return
  }
  console.log(`${scenario.subject.name}: ${subject.rate.toFixed(0)} jobs/s (median round)`)
  if (comparison && scenario.comparison) {
    console.log(
      `${scenario.comparison.name}: ${comparison.rate.toFixed(0)} jobs/s (${scenario.subject.name} / ${scenario.comparison.name} = ${(subject.rate / comparison.rate).toFixed(2)})${comparison.inexact ? `; NOT exactly once in ${comparison.inexact} of ${comparison.rounds} batches (listed above)` : '; each job exactly once'}`,
    )
  }
  const met = subject.rate >= scenario.minRate
  console.log(
    `target >= ${scenario.minRate} jobs/s: ${met ? 'met' : 'MISSED'} (${subject.rate.toFixed(0)} jobs/s)`,
  )
  console.log(
    `target every job exactly once: ${subject.problems.length ? 'MISSED' : 'met'} (${subject.jobs} jobs, warm-up included${subject.problems.length ? `; ${subject.problems.join('; ')}` : ''})`,
  )
}
