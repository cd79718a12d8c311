// `npm run bench -- <scenario> [args] [--seconds N] [--connections N] [--warmup N] [--rounds N]
// [--workspaces N] [--jobs N] [--requests N] [--seed N] [--path P] [--log-level L] [--results DIR]`
// runs one scenario of scripts/bench/scenarios (`--help` lists them): its servers as separate
// processes on loopback, the load driven from here, every answer checked. Comparisons alternate a
// baseline and the subject in the same run (scripts/bench/compare.ts). The run's figures are written
// as JSON under --results (bench-results/ by default) and summed up at the end. Exit status 1 when
// the setup or an operation fails outright, 2 on a usage error; a MISSED target is reported, not fatal.
import { parseArgs, resolveOptions, UsageError } from './bench/options'
import { stopPostgres } from './bench/process'
import { Report } from './bench/results'
import { SCENARIOS } from './bench/scenarios'

function usage(): string {
  const width = Math.max(...Object.keys(SCENARIOS).map((n) => n.length))
  return [
    'usage: npm run bench -- <scenario> [--seconds N] [--connections N] [--warmup N] [--rounds N] [--workspaces N] [--jobs N] [--requests N] [--seed N] [--path P] [--log-level L] [--results DIR]',
    'scenarios:',
    ...Object.entries(SCENARIOS).map(([name, s]) => `  ${name.padEnd(width)}  ${s.description}`),
  ].join('\n')
}

try {
  const parsed = parseArgs(process.argv.slice(2))
  if (parsed.help) {
    console.log(usage())
    process.exit(0)
  }
  const name = parsed.scenario ?? 'healthz'
  const scenario = SCENARIOS[name]
  if (!scenario) throw new UsageError(`unknown scenario "${name}"`)
  const opts = resolveOptions(parsed, scenario.defaults)
  const report = new Report(name, scenario.description, opts)
  report.print(`scenario ${name}: ${scenario.description}`)
  if (scenario.method) report.print(scenario.method)
  report.print(`${opts.connections} connections, gatehouse LOG_LEVEL=${opts.logLevel}`)
  try {
    await scenario.run({ opts, report })
    report.save(opts.results)
  } finally {
    await stopPostgres()
  }
} catch (e) {
  if (e instanceof UsageError) {
    console.error(`${e.message}\n${usage()}`)
    process.exit(2)
  }
  console.error(`FAILED: ${(e as Error).stack ?? e}`)
  process.exit(1)
}
process.exit(0)
