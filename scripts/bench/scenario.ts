// What a scenario file exports, and the shape most of them share: a throughput comparison of a
// subject against a baseline, both up at once, through the A/B comparator.
import { compare, type Side } from './compare'
import type { CpuUsage } from './cpu'
import { type Check, formatMs, median, runCheckedLoad } from './load'
import type { Defaults, Options } from './options'
import type { Report } from './results'

export interface Context {
  opts: Options
  report: Report
}

export interface Scenario {
  description: string
  /** How the figures are taken, when that is not plain checked requests; printed under the description. */
  method?: string
  defaults?: Defaults
  run(ctx: Context): Promise<void>
}

/** A side that was started and has to be stopped. */
export interface Started extends Side {
  stop(): Promise<void>
}

export interface SideSpec {
  name: string
  start(opts: Options): Promise<Started>
}

/** A side whose load is one HTTP request per operation (`make` builds a fresh one), each checked. */
export function httpSide(
  name: string,
  server: { pid: number; stop(): Promise<void>; databasePid?: number },
  make: () => Request,
  check: Check,
  opts: Options,
  more: Partial<Side> = {},
): Started {
  return {
    name,
    pids: [server.pid],
    databasePid: server.databasePid,
    load: (seconds) => runCheckedLoad(make, check, { seconds, connections: opts.connections }),
    stop: () => server.stop(),
    ...more,
  }
}

/** Starts `specs` in order; if one fails, stops those already up. */
export async function startAll(specs: SideSpec[], opts: Options): Promise<Started[]> {
  const up: Started[] = []
  try {
    for (const spec of specs) up.push(await spec.start(opts))
    return up
  } catch (e) {
    await stopAll(up)
    throw e
  }
}

export async function stopAll(sides: { stop(): Promise<void> }[]): Promise<void> {
  for (const side of sides) await side.stop()
}

/** Unmeasured load before each window (see CompareOptions.rewarm). */
export const REWARM_S = 0.5

/** Subject against baseline, both up for the whole run; a minimum ratio and/or subject rate. */
export function throughput(spec: {
  description: string
  method?: string
  defaults?: Defaults
  baseline: SideSpec
  subject: SideSpec
  minRatio?: number
  minRate?: number
}): Scenario {
  return {
    description: spec.description,
    method: spec.method,
    defaults: spec.defaults,
    async run({ opts, report }) {
      const [baseline, subject] = await startAll([spec.baseline, spec.subject], opts)
      try {
        const c = await compare(baseline!, subject!, { ...opts, rewarm: REWARM_S })
        report.comparison('throughput', c)
        const rate = median(c.subject.windows.map((w) => w.rps))
        report.figure('subject rate (median window)', rate, c.subject.unit)
        if (spec.minRate !== undefined)
          report.target(
            `${c.subject.name} >= ${spec.minRate} ${c.subject.unit}`,
            rate >= spec.minRate,
            `${rate.toFixed(0)} ${c.subject.unit}`,
          )
        if (spec.minRatio !== undefined) report.ratioTarget('throughput', spec.minRatio)
      } finally {
        await stopAll([baseline!, subject!])
      }
    },
  }
}

/** A latency figure: its percentiles printed and recorded, against an upper bound on the p95. */
export function reportLatency(
  report: Report,
  what: string,
  samples: { p50: number; p95: number; max: number },
  maxP95Ms: number,
): void {
  report.print(`${what}: ${formatMs(samples)}`)
  report.figure(`${what} p50 ms`, samples.p50, 'ms')
  report.figure(`${what} p95 ms`, samples.p95, 'ms')
  report.target(`${what} p95 < ${maxP95Ms} ms`, samples.p95 < maxP95Ms, `p95 ${samples.p95.toFixed(1)} ms`)
}

/** The server's CPU over a window of `count` operations, printed. */
export function reportCpu(report: Report, cpu: CpuUsage, count: number, unit: string): void {
  const per = cpu.server === null ? 'n/a' : `${((cpu.server / count) * 1000).toFixed(1)} ms per ${unit}`
  report.print(
    `  cpu: server ${per}, load generator ${cpu.driver?.toFixed(1) ?? 'n/a'} s, other processes ${cpu.others?.toFixed(1) ?? 'n/a'} s`,
  )
}
