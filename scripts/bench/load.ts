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

/** A rate as printed: whole numbers, but a tenth for slow operations (a few sign-ins a second). */
export const formatRate = (rate: number) => rate.toFixed(rate < 100 ? 1 : 0)

export const formatLoad = (name: string, r: LoadResult, unit = 'req/s') =>
  `${name.padEnd(28)} ${formatRate(r.rps).padStart(8)} ${unit}   p50 ${r.p50.toFixed(2)} ms   p95 ${r.p95.toFixed(2)} ms   p99 ${r.p99.toFixed(2)} ms   (${r.requests} ${unit === 'req/s' ? 'requests' : unit.replace(/\/s$/, '')}, ${r.errors} errors)`
