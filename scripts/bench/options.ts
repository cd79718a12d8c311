// The bench's command line: `npm run bench -- <scenario> [positional …] [--flag value …]`. Every flag
// is read here once; a scenario may set its own defaults (a sign-in takes a large part of a second:
// more seconds, fewer connections), which a flag given on the command line overrides.
import { availableParallelism } from 'node:os'
import { join } from 'node:path'

export interface Options {
  /** Seconds of one measured window. */
  seconds: number
  /** Closed-loop clients. */
  connections: number
  /** Seconds of unmeasured load on each side before the first window. */
  warmup: number
  /** Rounds of the A/B comparator (`--pairs` and `--windows` are the same flag). */
  rounds: number
  /** Gatehouse's LOG_LEVEL: `info` (one access-log line per request) or e.g. `warn`. */
  logLevel: string
  /** Workspaces of the memory scenarios. */
  workspaces: number
  /** Jobs per round of job-claims. */
  jobs: number
  /** Requests of the fuzzer, and its seed. */
  requests: number
  seed: number
  /** Below the workspace's issuer, for `alternate`. */
  path: string
  /** Where the JSON result of the run is written. */
  results: string
  /** Arguments after the scenario's name (`alternate`'s two trees). */
  positional: string[]
}

export type Defaults = Partial<Pick<Options, 'seconds' | 'connections' | 'warmup' | 'rounds'>>

const VALUED = [
  'seconds',
  'connections',
  'warmup',
  'rounds',
  'pairs',
  'windows',
  'log-level',
  'workspaces',
  'jobs',
  'requests',
  'seed',
  'path',
  'results',
] as const

export interface ParsedArgs {
  scenario: string | undefined
  help: boolean
  flag(name: (typeof VALUED)[number]): string | undefined
  positional: string[]
}

export function parseArgs(args: string[]): ParsedArgs {
  const valued = (i: number) => VALUED.some((f) => args[i - 1] === `--${f}`)
  const bare = args.filter((a, i) => !a.startsWith('--') && !valued(i))
  const unknown = args.filter(
    (a) => a.startsWith('--') && a !== '--help' && !VALUED.some((f) => a === `--${f}`),
  )
  if (unknown.length) throw new UsageError(`unknown flag ${unknown.join(', ')}`)
  return {
    scenario: bare[0],
    help: args.includes('--help') || args.includes('-h'),
    flag: (name) => {
      const at = args.indexOf(`--${name}`)
      return at >= 0 ? args[at + 1] : undefined
    },
    positional: bare.slice(1),
  }
}

export class UsageError extends Error {}

const positive = (name: string, value: number, integer = false) => {
  if (!(value > 0) || (integer && !Number.isInteger(value)))
    throw new UsageError(`--${name} takes a positive ${integer ? 'integer' : 'number'}`)
  return value
}

export function resolveOptions(parsed: ParsedArgs, defaults: Defaults = {}): Options {
  const num = (name: (typeof VALUED)[number], fallback: number) => {
    const given = parsed.flag(name)
    return given === undefined ? fallback : Number(given)
  }
  const rounds = Number(
    parsed.flag('rounds') ?? parsed.flag('pairs') ?? parsed.flag('windows') ?? defaults.rounds ?? 3,
  )
  const warmup = num('warmup', defaults.warmup ?? 2)
  if (!(warmup >= 0)) throw new UsageError('--warmup takes a number >= 0')
  return {
    seconds: positive('seconds', num('seconds', defaults.seconds ?? 5)),
    connections: positive('connections', num('connections', defaults.connections ?? 32), true),
    warmup,
    rounds: positive('rounds', rounds, true),
    logLevel: parsed.flag('log-level') ?? 'info',
    workspaces: positive('workspaces', num('workspaces', 10_000), true),
    jobs: positive('jobs', num('jobs', 20_000), true),
    requests: positive('requests', num('requests', 20_000), true),
    seed: num('seed', Math.floor(Math.random() * 2 ** 31)),
    path: parsed.flag('path') ?? '/.well-known/openid-configuration',
    results: parsed.flag('results') ?? join(import.meta.dir, '../../bench-results'),
    positional: parsed.positional,
  }
}

/** CPUs of this machine, for scenarios whose load is sized by them. */
export const CPUS = availableParallelism()
