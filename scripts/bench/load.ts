// Load result types and formatting; the load loop itself is runCheckedLoad (checked-load.ts).
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

export const formatLoad = (name: string, r: LoadResult) =>
  `${name.padEnd(28)} ${r.rps.toFixed(0).padStart(8)} req/s   p50 ${r.p50.toFixed(2)} ms   p95 ${r.p95.toFixed(2)} ms   p99 ${r.p99.toFixed(2)} ms   (${r.requests} requests, ${r.errors} errors)`
