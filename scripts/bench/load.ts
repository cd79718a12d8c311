// The checked load loop: N closed-loop clients for T seconds, every answer checked. Anything the
// check rejects (a non-200, a body without what the scenario needs, a failed fetch, a sign-in flow
// that did not end with a code) is an error and does not count towards the rate, so a server that
// answers fast and wrong cannot look fast; the distinct errors are kept with their counts.
import { decodeProtectedHeader } from 'jose'

/** Returns null when the response is what the scenario expects, else a short description. */
export type Check = (status: number, body: string) => string | null

export interface LoadResult {
  /** Operations finished, right or wrong. */
  requests: number
  errors: number
  /** Distinct error descriptions and how often each occurred. */
  errorKinds: Map<string, number>
  seconds: number
  /** Successful operations per second. */
  rps: number
  p50: number
  p95: number
  p99: number
}

export interface Percentiles {
  p50: number
  p95: number
  max: number
}

export const percentile = (sorted: Float64Array, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0

export const summarize = (values: number[]): Percentiles => {
  const sorted = Float64Array.from(values).sort()
  return { p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95), max: sorted[sorted.length - 1] ?? 0 }
}

/** The median of `values` (the upper one of an even count). */
export const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN

const statusProblem = (status: number, body: string) =>
  status === 200 ? null : `HTTP ${status}: ${body.slice(0, 160)}`

/** The JSON body of a 200, or the problem with the answer. */
function json200(status: number, body: string): { value: Record<string, unknown> } | { problem: string } {
  const problem = statusProblem(status, body)
  if (problem) return { problem }
  try {
    return { value: JSON.parse(body) as Record<string, unknown> }
  } catch {
    return { problem: `HTTP 200 with a body that is not JSON: ${body.slice(0, 160)}` }
  }
}

/** A 200 is all a plain GET scenario needs. */
export const expect200: Check = statusProblem

/**
 * A token response: 200 with a string `access_token`; with `alg`, a JWT signed with it (both sides
 * of a comparison must issue the same kind of token, or the ratio compares different work).
 */
export const expectAccessToken =
  (alg?: string): Check =>
  (status, body) => {
    const answer = json200(status, body)
    if ('problem' in answer) return answer.problem
    const token = answer.value.access_token
    if (typeof token !== 'string' || !token) return `HTTP 200 without access_token: ${body.slice(0, 160)}`
    if (!alg) return null
    try {
      const header = decodeProtectedHeader(token)
      return header.alg === alg ? null : `an access token signed with ${header.alg}, not ${alg}`
    } catch {
      return 'an access token that is not a JWT'
    }
  }

/** A list response (`{ items, total }`): 200 with `total` and `items.length` both equal to `n`. */
export const expectTotal =
  (n: number): Check =>
  (status, body) => {
    const answer = json200(status, body)
    if ('problem' in answer) return answer.problem
    const { items, total } = answer.value
    return total === n && Array.isArray(items) && items.length === n
      ? null
      : `HTTP 200 with total ${String(total)}, ${Array.isArray(items) ? items.length : 'no'} items (want ${n})`
  }

/**
 * Closed-loop load of any operation: `connections` loops, each running `op` (given its loop's index)
 * again as soon as the last one ended, for `seconds`. `op` resolves null when it did what the
 * scenario expects, else a short description of what went wrong (an error); a throw is an error too.
 */
export async function runClosedLoop(
  op: (connection: number) => Promise<string | null>,
  opts: { seconds: number; connections: number },
): Promise<LoadResult> {
  const latencies: number[] = []
  const errorKinds = new Map<string, number>()
  let errors = 0
  const fail = (kind: string) => {
    errors++
    errorKinds.set(kind, (errorKinds.get(kind) ?? 0) + 1)
  }
  const start = performance.now()
  const end = start + opts.seconds * 1000
  const loop = async (connection: number) => {
    while (performance.now() < end) {
      const t = performance.now()
      try {
        const problem = await op(connection)
        if (problem) fail(problem)
      } catch (e) {
        fail(`failed: ${(e as Error).message}`)
      }
      latencies.push(performance.now() - t)
    }
  }
  await Promise.all(Array.from({ length: opts.connections }, (_, i) => loop(i)))
  const seconds = (performance.now() - start) / 1000
  const sorted = Float64Array.from(latencies).sort()
  return {
    requests: latencies.length,
    errors,
    errorKinds,
    seconds,
    rps: (latencies.length - errors) / seconds,
    p50: percentile(sorted, 0.5),
    p95: percentile(sorted, 0.95),
    p99: percentile(sorted, 0.99),
  }
}

/** Closed-loop HTTP load: one request per operation (`make` builds a fresh one), its answer checked. */
export function runCheckedLoad(
  make: () => Request,
  check: Check,
  opts: { seconds: number; connections: number },
): Promise<LoadResult> {
  return runClosedLoop(async () => {
    let status: number
    let body: string
    try {
      const res = await fetch(make())
      status = res.status
      body = await res.text()
    } catch (e) {
      return `fetch failed: ${(e as Error).message}`
    }
    return check(status, body)
  }, opts)
}

/** A rate as printed: whole numbers, but a tenth for slow operations (a few sign-ins a second). */
export const formatRate = (rate: number) => rate.toFixed(rate < 100 ? 1 : 0)

export const formatLoad = (name: string, r: LoadResult, unit = 'req/s') =>
  `${name.padEnd(28)} ${formatRate(r.rps).padStart(8)} ${unit}   p50 ${r.p50.toFixed(2)} ms   p95 ${r.p95.toFixed(2)} ms   p99 ${r.p99.toFixed(2)} ms   (${r.requests} ${unit === 'req/s' ? 'requests' : unit.replace(/\/s$/, '')}, ${r.errors} errors)`

export const formatMs = (p: Percentiles) =>
  `p50 ${p.p50.toFixed(1)} ms   p95 ${p.p95.toFixed(1)} ms   max ${p.max.toFixed(1)} ms`
