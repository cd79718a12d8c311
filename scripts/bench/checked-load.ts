// Closed-loop load where every operation is checked: anything the check rejects (a non-200, a body
// without what the scenario needs, a failed fetch, a sign-in flow that did not end with a code) is
// an error, and the distinct errors are kept with their counts so the bench can print them.
import type { LoadResult, MakeRequest } from './load'

/** Returns null when the response is what the scenario expects, else a short description. */
export type Check = (status: number, body: string) => string | null

export interface CheckedLoadResult extends LoadResult {
  /** Distinct error descriptions and how often each occurred. */
  errorKinds: Map<string, number>
}

/** A 200 is all a plain GET scenario needs. */
export const expect200: Check = (status, body) =>
  status === 200 ? null : `HTTP ${status}: ${body.slice(0, 160)}`

/** A token response: 200 with a string `access_token`. */
export const expectAccessToken: Check = (status, body) => {
  if (status !== 200) return `HTTP ${status}: ${body.slice(0, 160)}`
  try {
    const token = (JSON.parse(body) as { access_token?: unknown }).access_token
    return typeof token === 'string' && token.length > 0
      ? null
      : `HTTP 200 without access_token: ${body.slice(0, 160)}`
  } catch {
    return `HTTP 200 with a body that is not JSON: ${body.slice(0, 160)}`
  }
}

/** A list response (`{ items, total }`): 200 with `total` and `items.length` both equal to `n`. */
export const expectTotal =
  (n: number): Check =>
  (status, body) => {
    if (status !== 200) return `HTTP ${status}: ${body.slice(0, 160)}`
    try {
      const { items, total } = JSON.parse(body) as { items?: unknown; total?: unknown }
      return total === n && Array.isArray(items) && items.length === n
        ? null
        : `HTTP 200 with total ${String(total)}, ${Array.isArray(items) ? items.length : 'no'} items (want ${n})`
    } catch {
      return `HTTP 200 with a body that is not JSON: ${body.slice(0, 160)}`
    }
  }

export const percentile = (sorted: Float64Array, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0

/**
 * Closed-loop load of any operation: `connections` loops, each running `op` (given its loop's index)
 * again as soon as the last one ended, for `seconds`. `op` resolves null when it did what the
 * scenario expects, else a short description of what went wrong (an error); a throw is an error too.
 * The latencies are per operation.
 */
export async function runClosedLoop(
  op: (connection: number) => Promise<string | null>,
  opts: { seconds: number; connections: number },
): Promise<CheckedLoadResult> {
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
    // Only successful operations count towards the rate: an error is not a served request.
    rps: (latencies.length - errors) / seconds,
    p50: percentile(sorted, 0.5),
    p95: percentile(sorted, 0.95),
    p99: percentile(sorted, 0.99),
  }
}

/** Closed-loop HTTP load: one request per operation, its response checked. */
export function runCheckedLoad(
  make: MakeRequest,
  check: Check,
  opts: { seconds: number; connections: number },
): Promise<CheckedLoadResult> {
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
