// The processes of a run: a Gatehouse node with a given environment on a free loopback port, a
// baseline server script, the throwaway PostgreSQL cluster of the PostgreSQL scenarios; each waited
// for until ready, and stopped (SIGTERM, then SIGKILL) at the end, also when the run fails.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { migrateDatabase, PostgresMissing, startThrowawayCluster, type ThrowawayCluster } from '../pg-cluster'
import { benchServerEnv, freePort } from './setup'

export const ROOT = join(import.meta.dir, '../..')
/** The bun running the bench: children run on it too, whether or not `bun` is on PATH. */
const BUN = process.execPath
/** BENCH_CPU_PROF=<dir>: each server writes a .cpuprofile there when it stops (Bun's --cpu-prof). */
const PROFILE = process.env.BENCH_CPU_PROF
  ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
  : []
/**
 * BENCH_PIN=<cpu list> (taskset's, e.g. `1`): every server runs on those CPUs, so the load generator
 * (pinned apart with `taskset -c 0 npm run bench …`) does not take its cycles. taskset execs the
 * server: the pid measured is the server's.
 */
const PIN = process.env.BENCH_PIN ? ['taskset', '-c', process.env.BENCH_PIN] : []

/** A bun child running `args`, pinned and profiled as asked. */
const bunCommand = (...args: string[]) => [...PIN, BUN, ...PROFILE, ...args]

export interface Running {
  url: string
  pid: number
  stop(): Promise<void>
}

/** SIGTERM, then SIGKILL if the process has not exited within 5 s (a hung shutdown must not hang the bench). */
export async function stopProcess(proc: ReturnType<typeof Bun.spawn>): Promise<void> {
  proc.kill()
  const timer = setTimeout(() => proc.kill('SIGKILL'), 5000)
  await proc.exited
  clearTimeout(timer)
}

/**
 * Runs a server script of scripts/bench/servers and waits for its `listening` line (JSON, with its
 * url) on stdout; with `logFile`, stdout (an access log) goes there and the line comes on stderr.
 */
export async function startServerScript(
  script: string,
  env: Record<string, string> = {},
  logFile?: string,
): Promise<Running> {
  const proc = Bun.spawn(bunCommand(join(import.meta.dir, 'servers', script)), {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdout: logFile ? Bun.file(logFile) : 'pipe',
    stderr: logFile ? 'pipe' : 'inherit',
  })
  const decoder = new TextDecoder()
  const reader = ((logFile ? proc.stderr : proc.stdout) as ReadableStream<Uint8Array>).getReader()
  let seen = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`${script} exited before listening:\n${seen}`)
    seen += decoder.decode(value)
    const line = seen.split('\n').find((l) => l.includes('"msg":"listening"'))
    if (line) {
      // Keep draining the pipe so the server never blocks on it.
      void (async () => {
        while (!(await reader.read()).done) {}
      })()
      return { url: JSON.parse(line).url, pid: proc.pid, stop: () => stopProcess(proc) }
    }
  }
}

export interface Gatehouse extends Running {
  dataDir: string
}

export interface GatehouseOptions {
  logLevel: string
  /** A PostgreSQL database (`postgres://…`); SQLite in the node's temp DATA_DIR when absent. */
  databaseUrl?: string
  nodeId?: string
  /** A source tree other than this checkout (alternate's sides). */
  tree?: string
  /** What bun runs instead of `src/main.ts serve` (a serve entry with extra job kinds). */
  entry?: string
  /** More environment (JOB_WORKERS, RATE_LIMIT_*, …). */
  env?: Record<string, string>
}

/**
 * Starts `gatehouse serve` on a port picked here, so BASE_URL (and every issuer) names the URL the
 * bench calls. Its stdout (the access log) goes to a file in its temp DATA_DIR rather than through a
 * pipe this process would have to drain while it drives the load; ready is a 200 on /healthz naming
 * the store asked for.
 */
export async function startGatehouse(opts: GatehouseOptions): Promise<Gatehouse> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-'))
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const store = opts.databaseUrl ? 'postgres' : 'sqlite'
  const env: Record<string, string> = {
    ...benchServerEnv(dataDir, port, opts.logLevel),
    DATABASE_URL: opts.databaseUrl ?? '',
    ...(opts.nodeId ? { NODE_ID: opts.nodeId } : {}),
    ...opts.env,
  }
  const logFile = join(dataDir, 'stdout.log')
  const proc = Bun.spawn(opts.entry ? bunCommand(opts.entry) : bunCommand('src/main.ts', 'serve'), {
    cwd: opts.tree ?? ROOT,
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
      return { url, dataDir, pid: proc.pid, stop }
    }
    await Bun.sleep(50)
  }
}

/** The throwaway PostgreSQL cluster of this run, started by the first side that needs it. */
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

/** A fresh migrated database of this run's cluster (a copy of the template), and its postmaster's pid. */
export async function freshPostgresDatabase(): Promise<{ url: string; postmaster: number }> {
  const cluster = await postgresCluster()
  return { url: await cluster.createDatabase(undefined, { template: TEMPLATE }), postmaster: cluster.pid }
}

/** Stops this run's cluster, if one was started. */
export async function stopPostgres(): Promise<void> {
  if (postgres) await (await postgres).stop()
}
