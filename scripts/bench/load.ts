// Closed-loop HTTP load on loopback: `connections` concurrent loops for `seconds`, keep-alive.
export interface LoadResult {
  requests: number
  errors: number
  seconds: number
  rps: number
  p50: number
  p95: number
  p99: number
}

export type MakeRequest = () => Request

const percentile = (sorted: Float64Array, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0

export async function runLoad(
  make: MakeRequest,
  opts: { seconds: number; connections: number },
): Promise<LoadResult> {
  const latencies: number[] = []
  let errors = 0
  const start = performance.now()
  const end = start + opts.seconds * 1000
  const loop = async () => {
    while (performance.now() < end) {
      const t = performance.now()
      try {
        const res = await fetch(make())
        await res.arrayBuffer()
        if (res.status >= 400) errors++
      } catch {
        errors++
      }
      latencies.push(performance.now() - t)
    }
  }
  await Promise.all(Array.from({ length: opts.connections }, loop))
  const seconds = (performance.now() - start) / 1000
  const sorted = Float64Array.from(latencies).sort()
  return {
    requests: latencies.length,
    errors,
    seconds,
    rps: latencies.length / seconds,
    p50: percentile(sorted, 0.5),
    p95: percentile(sorted, 0.95),
    p99: percentile(sorted, 0.99),
  }
}

export const formatLoad = (name: string, r: LoadResult) =>
  `${name.padEnd(28)} ${r.rps.toFixed(0).padStart(8)} req/s   p50 ${r.p50.toFixed(2)} ms   p95 ${r.p95.toFixed(2)} ms   p99 ${r.p99.toFixed(2)} ms   (${r.requests} requests, ${r.errors} errors)`
