// The record of a run: what the scenario measured (its comparisons, figures and targets) written as
// one JSON file per run under the results directory, and a readable summary printed at the end.
// Target lines report `met` or `MISSED`; a missed target does not fail the run (figures on a shared
// machine are noisy), a failed setup or a scenario's operation failing outright does.
import { mkdirSync, writeFileSync } from 'node:fs'
import { availableParallelism, cpus } from 'node:os'
import { join } from 'node:path'
import type { Comparison } from './compare'
import type { Options } from './options'

export interface Target {
  what: string
  met: boolean
  /** The figure as measured, as printed. */
  value: string
}

export interface RunResult {
  scenario: string
  description: string
  startedAt: string
  finishedAt?: string
  options: Omit<Options, 'results'>
  host: { cpus: number; model: string; bun: string }
  comparisons: Record<string, Comparison>
  figures: Record<string, { value: number; unit: string }>
  targets: Target[]
  /** Operations that failed their check, over the whole run. */
  errors: number
}

/** A ratio to two places, or as many more as keep it on its side of its target (0.796 is not `0.80`, MISSED). */
export function ratioText(ratio: number, target: number): string {
  for (let places = 2; places < 6; places++) {
    const text = ratio.toFixed(places)
    if (Number(text) >= target === ratio >= target) return text
  }
  return String(ratio)
}

export class Report {
  readonly result: RunResult

  constructor(
    scenario: string,
    description: string,
    options: Options,
    private readonly log: (line: string) => void = console.log,
  ) {
    const { results: _, ...rest } = options
    this.result = {
      scenario,
      description,
      startedAt: new Date().toISOString(),
      options: rest,
      host: { cpus: availableParallelism(), model: cpus()[0]?.model ?? 'unknown', bun: Bun.version },
      comparisons: {},
      figures: {},
      targets: [],
      errors: 0,
    }
  }

  /** A line of the running account. */
  print(line: string): void {
    this.log(line)
  }

  figure(name: string, value: number, unit: string): void {
    this.result.figures[name] = { value, unit }
  }

  errors(count: number): void {
    this.result.errors += count
  }

  comparison(name: string, c: Comparison): void {
    this.result.comparisons[name] = c
    this.errors(c.errors.baseline + c.errors.subject)
    const r = c.ratio
    this.print(
      `${name}: ${c.subject.name} / ${c.baseline.name} ${r.median.toFixed(3)}, median of ${c.ratios.length} rounds (${r.min.toFixed(3)} – ${r.max.toFixed(3)})`,
    )
  }

  target(what: string, met: boolean, value: string): void {
    this.result.targets.push({ what, met, value })
    this.print(`target ${what}: ${met ? 'met' : 'MISSED'} (${value})`)
  }

  /** The median ratio of comparison `name` against a minimum. */
  ratioTarget(name: string, min: number): void {
    const ratio = this.result.comparisons[name]!.ratio.median
    this.target(`${name} ratio >= ${min.toFixed(2)}`, ratio >= min, ratioText(ratio, min))
  }

  /** Writes `<dir>/<scenario>-<time>.json` and prints the summary; returns the file's path. */
  save(dir: string): string {
    this.result.finishedAt = new Date().toISOString()
    mkdirSync(dir, { recursive: true })
    const file = join(dir, `${this.result.scenario}-${this.result.startedAt.replace(/[:.]/g, '-')}.json`)
    writeFileSync(file, `${JSON.stringify(this.result, null, 2)}\n`)
    const { targets } = this.result
    this.print(`\nsummary of ${this.result.scenario}:`)
    for (const [name, c] of Object.entries(this.result.comparisons))
      this.print(
        `  ${name}: ratio ${c.ratio.median.toFixed(3)} (${c.ratio.min.toFixed(3)} – ${c.ratio.max.toFixed(3)}, ${c.ratios.length} rounds)`,
      )
    for (const t of targets) this.print(`  ${t.met ? 'met   ' : 'MISSED'} ${t.what} (${t.value})`)
    if (this.result.errors) this.print(`  ${this.result.errors} operations failed their check (listed above)`)
    this.print(`  results: ${file}`)
    return file
  }
}
