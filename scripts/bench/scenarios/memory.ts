// `memory`, `memory-postgres`: --workspaces active workspaces created through the API on one node
// (SQLite, or a fresh database of a throwaway PostgreSQL cluster), each touched once (discovery,
// then its first client-credentials token), the node's settled RSS read from /proc; then tokens at
// random over all workspaces against tokens on one workspace, through the A/B comparator.
import { readFileSync } from 'node:fs'
import { Api } from '../api'
import { compare, type Side } from '../compare'
import { cpuWindow } from '../cpu'
import { printSetup } from '../fixtures'
import {
  type Check,
  expect200,
  expectAccessToken,
  formatMs,
  type LoadResult,
  type Percentiles,
  runClosedLoop,
  summarize,
} from '../load'
import type { Options } from '../options'
import { freshPostgresDatabase, type Gatehouse, startGatehouse } from '../process'
import type { Context, Scenario } from '../scenario'
import { type BenchWorkspace, basicAuth } from '../setup'

export interface Resident {
  /** VmRSS: all resident pages, MiB. */
  rss: number
  /** RssAnon: the heap(s) and other anonymous memory, MiB (RSS minus mapped files such as the binary). */
  anon: number
}

/** The resident memory of `pid` (Linux /proc/<pid>/status); null elsewhere. */
export function resident(pid: number): Resident | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const kib = (field: string) =>
      Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN)
    return { rss: kib('VmRSS') / 1024, anon: kib('RssAnon') / 1024 }
  } catch {
    return null
  }
}

/**
 * The server's memory once it has settled: nothing is sent to it, and it is sampled every second
 * for at least 5 s, until three samples in a row are within 1 MiB of each other (its collector runs
 * on its own timers when idle; nothing in the product can be asked to collect), at most `maxSeconds`.
 */
export async function settledResident(
  pid: number,
  maxSeconds: number,
): Promise<{ at: Resident | null; seconds: number }> {
  const samples: number[] = []
  let last = resident(pid)
  for (let s = 1; s <= maxSeconds; s++) {
    await Bun.sleep(1000)
    last = resident(pid)
    if (!last) return { at: null, seconds: s }
    samples.push(last.rss)
    const recent = samples.slice(-3)
    if (s >= 5 && Math.max(...recent) - Math.min(...recent) < 1) return { at: last, seconds: s }
  }
  return { at: last, seconds: maxSeconds }
}

const tokenRequest = (ws: BenchWorkspace) =>
  new Request(`${ws.issuer}/token`, {
    method: 'POST',
    headers: {
      authorization: basicAuth(ws.clientId, ws.clientSecret),
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  })

async function timed(request: Request, check: Check): Promise<{ ms: number; problem: string | null }> {
  const t = performance.now()
  try {
    const res = await fetch(request)
    const body = await res.text()
    return { ms: performance.now() - t, problem: check(res.status, body) }
  } catch (e) {
    return { ms: performance.now() - t, problem: (e as Error).message }
  }
}

export interface Touched {
  /** Discovery of a workspace never asked before (its Provider is built for it). */
  discovery: Percentiles
  /** The first token of each workspace, right after its discovery. */
  firstToken: Percentiles
  /** The same, every one (ms), to merge several touches' percentiles. */
  firstTokenMs: number[]
  errors: Map<string, number>
  seconds: number
  /** RSS after every 1/10 of the workspaces, MiB. */
  growth: { touched: number; rss: number }[]
}

/** Every workspace once: discovery, then one client-credentials token; `concurrency` workspaces at a time. */
export async function touchAll(
  workspaces: BenchWorkspace[],
  concurrency: number,
  pid: number,
): Promise<Touched> {
  const discovery: number[] = []
  const firstToken: number[] = []
  const errors = new Map<string, number>()
  const growth: { touched: number; rss: number }[] = []
  const step = Math.max(1, Math.floor(workspaces.length / 10))
  let next = 0
  let done = 0
  const fail = (problem: string | null) => {
    if (problem) errors.set(problem, (errors.get(problem) ?? 0) + 1)
  }
  const started = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < workspaces.length; i = next++) {
        const ws = workspaces[i] as BenchWorkspace
        const d = await timed(new Request(`${ws.issuer}/.well-known/openid-configuration`), expect200)
        fail(d.problem)
        discovery.push(d.ms)
        const t = await timed(tokenRequest(ws), expectAccessToken('ES256'))
        fail(t.problem)
        firstToken.push(t.ms)
        if (++done % step === 0) growth.push({ touched: done, rss: resident(pid)?.rss ?? Number.NaN })
      }
    }),
  )
  return {
    discovery: summarize(discovery),
    firstToken: summarize(firstToken),
    firstTokenMs: firstToken,
    errors,
    seconds: (performance.now() - started) / 1000,
    growth,
  }
}

/** Client-credentials tokens, each of a workspace drawn at random from `workspaces`, for `seconds`. */
export const randomTokenLoad = (
  workspaces: BenchWorkspace[],
  opts: { seconds: number; connections: number },
): Promise<LoadResult> =>
  runClosedLoop(async () => {
    const ws = workspaces[Math.floor(Math.random() * workspaces.length)] as BenchWorkspace
    return (await timed(tokenRequest(ws), expectAccessToken('ES256'))).problem
  }, opts)

/**
 * Workspaces each node touches first and leaves out of its figures: a new process's first requests
 * run its code before the JIT compiled it, which is the process's start, not an instance's.
 */
const PROCESS_WARMUP_WORKSPACES = 200
/** Workspaces created at once: enough to keep the job worker's provisioning busy. */
const CREATION_CONCURRENCY = 16
/** Workspaces touched at once. */
export const TOUCH_CONCURRENCY = 8

/** Prints and counts a touch's errors. */
export function countErrors(report: Context['report'], errors: Map<string, number>): void {
  for (const [kind, count] of errors) {
    report.print(`  error ×${count}: ${kind}`)
    report.errors(count)
  }
}

export const mib = (r: Resident | null) =>
  r ? `RSS ${r.rss.toFixed(0)} MiB (anon ${r.anon.toFixed(0)} MiB)` : 'RSS n/a'

export interface MemoryNode {
  /** `SQLite` or `PostgreSQL`. */
  name: string
  gh: Gatehouse
  databasePid?: number
  /** The workspaces no identity request asked yet. */
  workspaces: BenchWorkspace[]
}

/**
 * A node on `store` with --workspaces workspaces created through its API, and the process's own
 * first ones touched (not counted). `started` is given the node as soon as it runs, to be stopped.
 */
export async function memoryNode(
  opts: Options,
  report: Context['report'],
  store: 'sqlite' | 'postgres',
  started: (gh: Gatehouse) => void,
): Promise<MemoryNode> {
  const name = store === 'postgres' ? 'PostgreSQL' : 'SQLite'
  const pg = store === 'postgres' ? await freshPostgresDatabase() : null
  const gh = await startGatehouse({
    logLevel: opts.logLevel,
    ...(pg ? { databaseUrl: pg.url, nodeId: 'bench-node-1' } : {}),
  })
  started(gh)
  report.print(`${name} node idle: ${mib((await settledResident(gh.pid, 10)).at)}`)
  const t = performance.now()
  const api = new Api(gh.url)
  const created = await api.createWorkspaces(
    await api.signUpOwner(),
    opts.workspaces + PROCESS_WARMUP_WORKSPACES,
    {
      concurrency: CREATION_CONCURRENCY,
    },
  )
  report.print(
    `${name}: ${created.length} workspaces created through the API in ${((performance.now() - t) / 1000).toFixed(1)} s`,
  )
  printSetup(`${name}'s workspaces`, api)
  const first = await touchAll(created.slice(0, PROCESS_WARMUP_WORKSPACES), TOUCH_CONCURRENCY, gh.pid)
  countErrors(report, first.errors)
  return { name, gh, databasePid: pg?.postmaster, workspaces: created.slice(PROCESS_WARMUP_WORKSPACES) }
}

/** Tokens at random over `workspaces` of `node`, as a side of the comparator. */
export const tokenSide = (
  name: string,
  node: MemoryNode,
  workspaces: BenchWorkspace[],
  opts: Options,
): Side => ({
  name,
  pids: [node.gh.pid],
  databasePid: node.databasePid,
  load: (seconds) => randomTokenLoad(workspaces, { seconds, connections: opts.connections }),
})

/** The steady state's warm-up: every workspace asked (an instance's state is held 30 s after use). */
export const MEMORY_WARMUP_S = 10

function memoryScenario(store: 'sqlite' | 'postgres'): Scenario {
  return {
    description: `--workspaces active workspaces on one gatehouse node (${store === 'postgres' ? 'PostgreSQL: a fresh database of a throwaway local cluster, fsync off' : 'SQLite'}), each with keys and a web app, all created through the API`,
    method: `${PROCESS_WARMUP_WORKSPACES} more touched first (the process's code compiled; not counted); each touched once, ${TOUCH_CONCURRENCY} at a time: discovery (loads the instance), then its first client-credentials token; RSS once the idle server settled; then tokens at random over all vs on one workspace, in --rounds alternated rounds (--pairs: the same)`,
    defaults: { rounds: 9, warmup: MEMORY_WARMUP_S },
    async run({ opts, report }) {
      let gh: Gatehouse | undefined
      try {
        const node = await memoryNode(opts, report, store, (g) => {
          gh = g
        })
        const { workspaces } = node
        const cpu = cpuWindow([node.gh.pid], { databasePid: node.databasePid })
        const touched = await touchAll(workspaces, TOUCH_CONCURRENCY, node.gh.pid)
        const spent = cpu()
        countErrors(report, touched.errors)
        report.print(`touched ${workspaces.length} workspaces in ${touched.seconds.toFixed(1)} s`)
        report.print(`  discovery, cold instance     ${formatMs(touched.discovery)}`)
        report.print(`  first token of an instance   ${formatMs(touched.firstToken)}`)
        if (spent.server !== null)
          report.print(
            `  cpu: server ${((spent.server / workspaces.length) * 1e6).toFixed(0)} µs per workspace`,
          )
        report.print(
          `  RSS while touching: ${touched.growth.map((g) => `${g.touched}: ${g.rss.toFixed(0)}`).join(', ')} MiB`,
        )
        const settled = await settledResident(node.gh.pid, 30)
        report.print(`after touching all: ${mib(settled.at)} settled after ${settled.seconds} s idle`)
        const rss = settled.at?.rss ?? Number.NaN
        report.figure('settled RSS', rss, 'MiB')
        report.figure('first token p95', touched.firstToken.p95, 'ms')
        const random = tokenSide(`tokens, random of ${workspaces.length}`, node, workspaces, opts)
        const single = tokenSide('tokens, one workspace', node, workspaces.slice(0, 1), opts)
        report.comparison('random / single', await compare(single, random, opts))
        report.print(`after the loads: ${mib(resident(node.gh.pid))}`)
        // Issue 59 "Must hold": 10,000 workspaces in < 300 MiB.
        report.target('settled RSS < 300 MiB', rss < 300, `${rss.toFixed(0)} MiB`)
        report.target(
          'first token p95 < 10 ms',
          touched.firstToken.p95 < 10,
          `${touched.firstToken.p95.toFixed(1)} ms`,
        )
        report.ratioTarget('random / single', 0.7)
      } finally {
        await gh?.stop()
      }
    },
  }
}

export const memory = memoryScenario('sqlite')
export const memoryPostgres = memoryScenario('postgres')
