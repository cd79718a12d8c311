// The one A/B comparator. Both sides stay up for the whole run and are measured in alternating
// windows, the order flipped every round (baseline subject, subject baseline, …), so that a slow
// minute of a shared machine falls on both; each round gives a ratio subject / baseline, and the
// result is their median with the spread (lowest, highest). Each window is a checked load (an
// error does not count towards the rate) with the CPU its side's processes spent in it.
import { type CpuUsage, cpuWindow } from './cpu'
import { formatLoad, type LoadResult, median } from './load'

export interface Side {
  name: string
  /** What one operation is, as a rate (`tokens/s`); `req/s` when absent. */
  unit?: string
  /** The processes serving this side, whose CPU is its cost (none: not measured). */
  pids?: number[]
  /** A PostgreSQL postmaster the side uses: its backends' CPU counts too. */
  databasePid?: number
  /** One checked load of `seconds` (a side whose load is a fixed amount of work may ignore it). */
  load(seconds: number): Promise<LoadResult>
  /** Before each load, outside its window (e.g. single-use assertions signed); returns a note. */
  prepare?(seconds: number): Promise<string | undefined>
}

export interface Window {
  rps: number
  requests: number
  errors: number
  errorKinds: Record<string, number>
  seconds: number
  p50: number
  p95: number
  p99: number
  cpu: CpuUsage
  /** CPU µs of the side's processes (and database) per successful operation. */
  cpuPerOp: number | null
}

export interface Spread {
  median: number
  min: number
  max: number
}

export interface Comparison {
  baseline: { name: string; unit: string; windows: Window[] }
  subject: { name: string; unit: string; windows: Window[] }
  /** subject rate / baseline rate, per round. */
  ratios: number[]
  ratio: Spread
  /** baseline CPU per operation / subject CPU per operation, per round (null where unmeasured). */
  costRatios: (number | null)[]
  errors: { baseline: number; subject: number }
}

export interface CompareOptions {
  rounds: number
  seconds: number
  /** Unmeasured load on each side before the first round. */
  warmup: number
  /**
   * Unmeasured load before every window: a side idled while the other was measured, its idle
   * connections may have been closed (the first request on one fails) and the caches hold the other's.
   */
  rewarm?: number
  /** Where window lines go (console.log by default). */
  log?: (line: string) => void
}

export const spread = (values: number[]): Spread => ({
  median: median(values),
  min: Math.min(...values),
  max: Math.max(...values),
})

const unitOf = (side: Side) => side.unit ?? 'req/s'
const singular = (unit: string) =>
  unit
    .replace(/\/s$/, '')
    .replace(/ies$/, 'y')
    .replace(/(ch|sh|x)es$/, '$1')
    .replace(/s$/, '')

/** An unmeasured load (with what it needs prepared); its errors are not counted. */
async function warm(side: Side, seconds: number): Promise<void> {
  if (seconds <= 0) return
  await side.prepare?.(seconds)
  await side.load(seconds)
}

/** One measured window of `side`. */
export async function measureWindow(side: Side, seconds: number, log = console.log): Promise<Window> {
  const note = await side.prepare?.(seconds)
  if (note) log(`  ${side.name}: ${note}`)
  const done = cpuWindow(side.pids, { databasePid: side.databasePid })
  const load = await side.load(seconds)
  const cpu = done()
  const served = load.requests - load.errors
  const spent = cpu.server === null ? null : cpu.server + (cpu.database ?? 0)
  const cpuPerOp = spent !== null && served > 0 ? (spent / served) * 1e6 : null
  const unit = unitOf(side)
  log(formatLoad(side.name, load, unit))
  for (const [kind, count] of load.errorKinds) log(`  error ×${count}: ${kind}`)
  if (cpuPerOp !== null) {
    const cores = (s: number | null) => (s === null ? 'n/a' : `${(s / load.seconds).toFixed(2)} cores`)
    log(
      `  cpu: ${cpuPerOp.toFixed(0)} µs/${singular(unit)} (server ${cores(cpu.server)}${side.databasePid ? `, database ${cores(cpu.database)}` : ''}), load generator ${cores(cpu.driver)}, other processes ${cores(cpu.others)}`,
    )
  }
  const { errorKinds, ...rest } = load
  return { ...rest, errorKinds: Object.fromEntries(errorKinds), cpu, cpuPerOp }
}

export async function compare(baseline: Side, subject: Side, opts: CompareOptions): Promise<Comparison> {
  const log = opts.log ?? console.log
  log(
    `${baseline.name} against ${subject.name}: ${opts.rounds} rounds of ${opts.seconds} s windows, the order flipped each round, after ${opts.warmup} s of warm-up each`,
  )
  await warm(baseline, opts.warmup)
  await warm(subject, opts.warmup)
  const result: Comparison = {
    baseline: { name: baseline.name, unit: unitOf(baseline), windows: [] },
    subject: { name: subject.name, unit: unitOf(subject), windows: [] },
    ratios: [],
    ratio: { median: Number.NaN, min: Number.NaN, max: Number.NaN },
    costRatios: [],
    errors: { baseline: 0, subject: 0 },
  }
  for (let round = 0; round < opts.rounds; round++) {
    const got = new Map<Side, Window>()
    for (const side of round % 2 === 0 ? [baseline, subject] : [subject, baseline]) {
      await warm(side, opts.rewarm ?? 0)
      got.set(side, await measureWindow(side, opts.seconds, log))
    }
    const b = got.get(baseline)!
    const s = got.get(subject)!
    result.baseline.windows.push(b)
    result.subject.windows.push(s)
    result.errors.baseline += b.errors
    result.errors.subject += s.errors
    const ratio = s.rps / b.rps
    const cost = b.cpuPerOp !== null && s.cpuPerOp !== null ? b.cpuPerOp / s.cpuPerOp : null
    result.ratios.push(ratio)
    result.costRatios.push(cost)
    log(
      `round ${round + 1}: ${subject.name} / ${baseline.name} ${ratio.toFixed(3)}${cost === null ? '' : `, cpu cost ratio ${cost.toFixed(2)}`}`,
    )
  }
  result.ratio = spread(result.ratios)
  return result
}
