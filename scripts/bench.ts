// Benchmarks a named scenario against a baseline measured in the same run, and prints the ratio.
//   bun scripts/bench.ts [scenario] [--seconds N] [--connections N] [--warmup N] [--rounds N] [--log-level info|warn|…]
// Scenarios: healthz, discovery, jwks, client-credentials, apps-list, provisioning, fuzz (see `scenarios` below).
// All but `provisioning` and `fuzz` are throughput scenarios; `provisioning` is a latency scenario: it times a
// sequence of operations against an absolute target and has no baseline (nor uses --seconds,
// --connections, --warmup or --rounds), but prints in the same shape. `fuzz` sends --requests (20,000)
// hostile requests from tests/support/fuzz.ts, seeded by --seed (random unless given), over
// --connections, and reports the rate, the status histogram (per route too) and every 5xx or leaked stack.
// Servers run as separate processes on loopback; this process drives the load. A run measures
// baseline, then subject and baseline again for each round (3 by default; one server process at a
// time), compares each subject run with the mean of the baselines just before and after it, and
// reports the median round: drift during the run (thermal, noisy neighbours) shows up as a spread
// between rounds instead of deciding the result.
// Every response is checked (see bench/checked-load.ts); a rejected one counts as an error. On
// Linux it also prints the server's CPU time per request, which moves far less than req/s when
// other processes share the machine (their CPU use is printed too).
// Target lines report `met` or `MISSED`; the exit status is 0 either way (1 only if setup fails, or a
// latency scenario's operation fails outright, e.g. a workspace ends `provisioning_failed`).
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { decodeProtectedHeader } from 'jose'
import { type FuzzReport, formatReport, loadRoutes, runFuzz } from '../tests/support/fuzz'
import {
  type Check,
  type CheckedLoadResult,
  expect200,
  expectAccessToken,
  expectTotal,
  runCheckedLoad,
} from './bench/checked-load'
import { type CpuUsage, cpuWindow } from './bench/cpu'
import { formatLoad, type MakeRequest } from './bench/load'
import { measureProvisioning, type Percentiles } from './bench/provisioning'
import { basicAuth, freePort, seedSession, seedWorkspace } from './bench/setup'

const root = join(import.meta.dir, '..')

const FLAGS = ['seconds', 'connections', 'warmup', 'log-level', 'rounds', 'requests', 'seed'] as const
const args = process.argv.slice(2)
const flag = (name: (typeof FLAGS)[number]) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1] : undefined
}
const positional = args.filter((a, i) => !a.startsWith('--') && !FLAGS.some((f) => args[i - 1] === `--${f}`))
const seconds = Number(flag('seconds') ?? 5)
const connections = Number(flag('connections') ?? 32)
/** Seconds of load before each measurement (the token endpoint's code path takes a while to JIT). */
const warmup = Number(flag('warmup') ?? 2)
/** Gatehouse's LOG_LEVEL: `info` (the default, one access-log line per request) or e.g. `warn`. */
const logLevel = flag('log-level') ?? 'info'
/** Subject runs of a throughput scenario, each between two baseline runs; the median is reported. */
const roundCount = Number(flag('rounds') ?? 3)
if (
  !(seconds > 0) ||
  !(connections >= 1) ||
  !(warmup >= 0) ||
  !(Number.isInteger(roundCount) && roundCount >= 1)
) {
  console.error('--seconds, --connections, --warmup and --rounds take positive numbers')
  process.exit(2)
}

/** A server under load: how to build one request, how to check its response, how to stop it. */
interface Target {
  make: MakeRequest
  check: Check
  /** Runs once after start and before the warm-up; throws when the server is not what we expect. */
  verify?: () => Promise<string | undefined>
  /** The server process, for CPU accounting. */
  pid?: number
  stop(): Promise<void>
}

interface Side {
  name: string
  start(): Promise<Target>
}

interface ThroughputScenario {
  kind?: 'throughput'
  description: string
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
}

interface LatencyScenario {
  kind: 'latency'
  description: string
  /** How the figures are taken, printed under the description. */
  method: string
  /** Upper bound on the p95, ms. */
  maxP95Ms: number
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

type Scenario = ThroughputScenario | LatencyScenario | FuzzScenario

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
  pid: number
  stop(): Promise<void>
}

/**
 * Starts `gatehouse serve` on a port picked here, so BASE_URL (and every issuer) names the URL the
 * bench calls. Its stdout (the access log) goes to a file in its temp DATA_DIR rather than through
 * a pipe this process would have to drain while it drives the load; readiness is a 200 on /healthz,
 * which works at any LOG_LEVEL.
 */
async function startGatehouse(): Promise<Gatehouse> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-'))
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const env = {
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: url,
    // Known to this process too: it seals the instance keys it writes into the same store.
    SECRET_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: logLevel,
  }
  const logFile = join(dataDir, 'stdout.log')
  const proc = Bun.spawn(['bun', 'src/main.ts', 'serve'], {
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
    const ok = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    )
    if (ok) return { url, env, pid: proc.pid, stop }
    await Bun.sleep(50)
  }
}

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
    const s = await start(['bun', 'scripts/bench/baseline-hello.ts'])
    return getTarget(`${s.url}/`, s.proc.pid, () => stopProcess(s.proc))
  },
}

/** A Gatehouse with one active workspace (keys, a web app) whose Provider is built and warm. */
async function gatehouseWithWorkspace(path: string) {
  const gh = await startGatehouse()
  try {
    const ws = await seedWorkspace(gh.env)
    // The first request to an instance builds its Provider: make sure that is behind us and that
    // the issuer the server announces is the URL we call.
    const res = await fetch(`${ws.issuer}/.well-known/openid-configuration`)
    const doc = (await res.json()) as { issuer?: string }
    if (res.status !== 200 || doc.issuer !== ws.issuer) {
      throw new Error(`discovery of ${ws.issuer} answered ${res.status} with issuer ${doc.issuer}`)
    }
    return { gh, ws, url: `${ws.issuer}${path}` }
  } catch (e) {
    await gh.stop()
    throw e
  }
}

/** Apps in the workspace the apps-list scenario lists. */
const APPS_LISTED = 5
const PROVISION_COUNT = 50
const PROVISION_POLL_MS = 10
const PROVISION_TIMEOUT_MS = 10_000

const scenarios: Record<string, Scenario> = {
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
      'GET {issuer}/.well-known/openid-configuration of a workspace instance through the full server (answered from the bridge cache after the first request) vs a bare Bun.serve hello handler',
    minRate: 10_000,
    unit: 'req/s',
    baseline: bareHello,
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
      'GET {issuer}/jwks of a workspace instance through the full server (answered from the bridge cache after the first request) vs a bare Bun.serve hello handler',
    unit: 'req/s',
    baseline: bareHello,
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
    minRatio: 0.7,
    unit: 'tokens/s',
    baseline: {
      name: 'bare oidc-provider',
      async start() {
        const clientId = 'bench-client'
        const clientSecret = randomBytes(32).toString('base64url')
        const s = await start(['bun', 'scripts/bench/baseline-oidc.ts'], {
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
  'apps-list': {
    description: `GET /v1/workspaces/{id}/apps with a dashboard session cookie (session lookup, owner-scoped workspace lookup, ${APPS_LISTED} apps) through the full server vs a bare Bun.serve hello handler`,
    minRate: 5_000,
    unit: 'req/s',
    baseline: bareHello,
    subject: {
      name: 'gatehouse: apps-list',
      async start() {
        const gh = await startGatehouse()
        try {
          const session = await seedSession(gh.env)
          const ws = await seedWorkspace(gh.env, { ownerId: session.accountId, apps: APPS_LISTED })
          const url = `${gh.url}/v1/workspaces/${ws.workspaceId}/apps`
          const headers = { cookie: session.cookie }
          const check = expectTotal(APPS_LISTED)
          return {
            make: () => new Request(url, { headers }),
            check,
            async verify() {
              // Without the cookie the route must refuse, or the load below would not measure auth.
              const anonymous = await fetch(url)
              await anonymous.body?.cancel()
              if (anonymous.status !== 401)
                throw new Error(`${url} without a session answered ${anonymous.status}`)
              const res = await fetch(url, { headers })
              const problem = check(res.status, await res.text())
              if (problem) throw new Error(`${url}: ${problem}`)
              return `session cookie ${session.cookie.split('=')[0]} of platform account ${session.accountId}; ${APPS_LISTED} apps listed (401 without it)`
            },
            pid: gh.pid,
            stop: gh.stop,
          }
        } catch (e) {
          await gh.stop()
          throw e
        }
      },
    },
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
          const session = await seedSession(gh.env)
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
  fuzz: {
    kind: 'fuzz',
    description:
      'hostile requests (bodies, headers, cookies, path ids) over every route of /openapi.json, the dashboard forms and the identity endpoints of the platform instance and a workspace instance, with a seeded dashboard session',
    async run(opts) {
      const gh = await startGatehouse()
      try {
        const session = await seedSession(gh.env)
        const fuzzed = await seedWorkspace(gh.env, { ownerId: session.accountId })
        const identity = await seedWorkspace(gh.env, { ownerId: session.accountId })
        const foreign = await seedWorkspace(gh.env)
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
}

const cores = (cpuSeconds: number | null, wall: number) =>
  cpuSeconds === null ? 'n/a' : `${(cpuSeconds / wall).toFixed(2)} cores`

/** Starts one side, checks it, warms it up, measures it, stops it. */
async function measure(side: Side, label: string): Promise<Measured> {
  const target = await side.start()
  try {
    const note = await target.verify?.()
    if (note) console.log(`  ${label}: ${note}`)
    if (warmup > 0) await runCheckedLoad(target.make, target.check, { seconds: warmup, connections })
    const done = cpuWindow(target.pid)
    const load = await runCheckedLoad(target.make, target.check, { seconds, connections })
    const cpu = done()
    const served = load.requests - load.errors
    const cpuPerRequest = cpu.server !== null && served > 0 ? (cpu.server / served) * 1e6 : null
    console.log(formatLoad(label, load))
    for (const [kind, count] of load.errorKinds) console.log(`  error ×${count}: ${kind}`)
    console.log(
      `  cpu: server ${cpuPerRequest === null ? 'n/a' : `${cpuPerRequest.toFixed(0)} µs/req`} (${cores(cpu.server, load.seconds)}), load generator ${cores(cpu.driver, load.seconds)}, other processes ${cores(cpu.others, load.seconds)}`,
    )
    return { load, cpu, cpuPerRequest }
  } finally {
    await target.stop()
  }
}

const name = positional[0] ?? 'healthz'
const scenario = scenarios[name]
if (!scenario) {
  console.error(`unknown scenario "${name}"; known: ${Object.keys(scenarios).join(', ')}`)
  process.exit(2)
}
if (scenario.kind === 'latency') await runLatency(name, scenario)
else if (scenario.kind === 'fuzz') await runFuzzScenario(name, scenario)
else await runThroughput(name, scenario)
process.exit(0)

async function runThroughput(name: string, scenario: ThroughputScenario) {
  const targets = [
    scenario.minRate !== undefined ? `>= ${scenario.minRate} ${scenario.unit}` : null,
    scenario.minRatio !== undefined ? `ratio >= ${scenario.minRatio.toFixed(2)}` : null,
  ].filter(Boolean)
  console.log(`scenario ${name}: ${scenario.description}`)
  console.log(
    `${seconds} s per measurement after ${warmup} s of warm-up, ${connections} connections, gatehouse LOG_LEVEL=${logLevel}, target ${targets.join(' and ') || 'none (informational)'}`,
  )
  console.log('req/s counts responses that passed the check; p50/p95/p99 are per-request latencies')
  // baseline, then (subject, baseline) per round: each subject run is compared with the mean of the
  // baseline runs just before and after it, and the median round is reported.
  const baselines = [await measure(scenario.baseline, `baseline: ${scenario.baseline.name}`)]
  const rounds: { subject: Measured; ratio: number; cost: number | null }[] = []
  for (let r = 0; r < roundCount; r++) {
    const measured = await measure(scenario.subject, scenario.subject.name)
    const after = await measure(scenario.baseline, `baseline: ${scenario.baseline.name}`)
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
      `round ${r + 1}: ratio ${ratio.toFixed(2)} (gatehouse ${measured.load.rps.toFixed(0)} req/s / mean of the baselines around it ${baselineRps.toFixed(0)} req/s, which differ by ${(spread * 100).toFixed(1)}%)${cost === null ? '' : `; cpu cost ratio ${cost.toFixed(2)} (baseline µs per request / gatehouse)`}`,
    )
  }
  const median = [...rounds].sort((x, y) => x.ratio - y.ratio)[Math.floor(rounds.length / 2)]!
  const subject = median.subject.load
  const ratio = median.ratio
  if (rounds.length > 1) {
    console.log(`rounds' ratios: ${rounds.map((r) => r.ratio.toFixed(2)).join(', ')}`)
  }
  console.log(
    `ratio ${ratio.toFixed(2)} (${rounds.length > 1 ? 'median round, ' : ''}gatehouse / mean baseline req/s)`,
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
      `target ratio >= ${scenario.minRatio.toFixed(2)}: ${met ? 'met' : 'MISSED'} (${ratio.toFixed(2)})`,
    )
  }
  if (subject.errors > 0)
    console.log(`gatehouse answered ${subject.errors} requests with errors (listed above)`)
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
      : `${((m.cpu.server / m.count) * 1000).toFixed(1)} ms per ${m.unit.replace(/s$/, '')}`
  console.log(
    `  cpu: server ${perOp} (${cores(m.cpu.server, m.seconds)}), load generator ${cores(m.cpu.driver, m.seconds)}, other processes ${cores(m.cpu.others, m.seconds)}`,
  )
  console.log('baseline: n/a (latency target)')
  const met = s.p95 < scenario.maxP95Ms
  console.log(`target p95 < ${scenario.maxP95Ms} ms: ${met ? 'met' : 'MISSED'} (p95 ${s.p95.toFixed(1)} ms)`)
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
