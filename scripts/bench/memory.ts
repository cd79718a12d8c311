// The memory scenario's measurements (scripts/bench.ts `memory`): a server's resident memory read
// from /proc, the touch of every workspace (discovery, then one client-credentials token), and
// token load spread at random over many workspaces.
import { readFileSync } from 'node:fs'
import {
  type Check,
  type CheckedLoadResult,
  expect200,
  expectAccessToken,
  runClosedLoop,
} from './checked-load'
import { type Percentiles, summarize } from './provisioning'
import { type BenchWorkspace, basicAuth } from './setup'

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
        const t = await timed(tokenRequest(ws), expectAccessToken)
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
): Promise<CheckedLoadResult> =>
  runClosedLoop(async () => {
    const ws = workspaces[Math.floor(Math.random() * workspaces.length)] as BenchWorkspace
    return (await timed(tokenRequest(ws), expectAccessToken)).problem
  }, opts)
