// Benchmarks a named scenario against a baseline measured in the same run, and prints the ratio.
//   bun scripts/bench.ts [scenario] [--seconds N] [--connections N]
// Servers run as separate processes on loopback; this process drives the load.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { formatLoad, type LoadResult, runLoad } from './bench/load'

const root = join(import.meta.dir, '..')
const args = process.argv.slice(2)
const flag = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? Number(args[i + 1]) : fallback
}
const seconds = flag('seconds', 5)
const connections = flag('connections', 32)

interface Started {
  url: string
  proc: ReturnType<typeof Bun.spawn>
}

/** Spawns a process and waits for its `listening` log line. */
async function start(cmd: string[], env: Record<string, string> = {}): Promise<Started> {
  const proc = Bun.spawn(cmd, {
    cwd: root,
    env: { ...process.env, ...env },
    stdout: 'pipe',
    stderr: 'inherit',
  })
  const decoder = new TextDecoder()
  let seen = ''
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader()
  for (;;) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`${cmd.join(' ')} exited before listening:\n${seen}`)
    seen += decoder.decode(value)
    const line = seen.split('\n').find((l) => l.includes('"msg":"listening"'))
    if (line) {
      // Keep draining stdout (the access log) so the server never blocks on a full pipe.
      void (async () => {
        while (!(await reader.read()).done) {}
      })()
      return { url: JSON.parse(line).url.replace('localhost', '127.0.0.1'), proc }
    }
  }
}

const startGatehouse = () =>
  start(['bun', 'src/main.ts', 'serve'], {
    DATA_DIR: mkdtempSync(join(tmpdir(), 'gatehouse-bench-')),
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
  })

interface Scenario {
  description: string
  target: string
  run(): Promise<{ subject: LoadResult; baseline: LoadResult; baselineName: string }>
}

async function measure(s: Started, path: string): Promise<LoadResult> {
  const url = `${s.url}${path}`
  await runLoad(() => new Request(url), { seconds: 1, connections }) // warm-up
  return runLoad(() => new Request(url), { seconds, connections })
}

const scenarios: Record<string, Scenario> = {
  healthz: {
    description: 'GET /healthz through the full middleware stack vs a bare Bun.serve hello handler',
    target: 'ratio >= 0.50',
    async run() {
      const baselineServer = await start(['bun', 'scripts/bench/baseline-hello.ts'])
      const baseline = await measure(baselineServer, '/')
      baselineServer.proc.kill()
      const gh = await startGatehouse()
      const subject = await measure(gh, '/healthz')
      gh.proc.kill()
      return { subject, baseline, baselineName: 'bare Bun.serve hello' }
    },
  },
}

const name = args.find((a) => !a.startsWith('--') && !/^\d+$/.test(a)) ?? 'healthz'
const scenario = scenarios[name]
if (!scenario) {
  console.error(`unknown scenario "${name}"; known: ${Object.keys(scenarios).join(', ')}`)
  process.exit(2)
}
console.log(`scenario ${name}: ${scenario.description}`)
console.log(`${seconds} s per measurement, ${connections} connections, target ${scenario.target}`)
const { subject, baseline, baselineName } = await scenario.run()
console.log(formatLoad(`baseline: ${baselineName}`, baseline))
console.log(formatLoad(`gatehouse: ${name}`, subject))
console.log(`ratio ${(subject.rps / baseline.rps).toFixed(2)} (gatehouse / baseline req/s)`)
process.exit(0)
