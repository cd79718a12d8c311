// `bun scripts/bench/alternate.ts <A> <B> [--path P] [--windows N] [--seconds S] [--log-level L]`:
// two servers up side by side, measured in alternating windows (A B, B A, A B, …) under the
// bench's closed-loop load (32 connections), so that a slow minute of a shared machine falls on
// both. Prints each side's median rate and server CPU per request, and the median over the pairs
// of B's rate / A's: on a 2-core machine whose speed drifts by a third within minutes, a 3%
// difference shows here where sequential runs (scripts/bench.ts) cannot separate it.
//   A, B   a source tree of Gatehouse (a directory holding src/main.ts: this checkout, or another
//          one, e.g. `git worktree add /tmp/before HEAD~1`), or `bare`: scripts/bench/baseline-bytes.ts
//          answering the bytes and the library's headers (setup.ts LIBRARY_HEADERS) A's instance answered (A must be a tree),
//          or `dressed`: the same handler answering every header A's instance answered too (its
//          security headers, and one request id for all), so that `. dressed` leaves out what the
//          headers themselves cost (most of it in the client that parses them);
//          with --path /token, `bare` is scripts/bench/baseline-oidc.ts (the client-credentials
//          scenario's baseline: a bare oidc-provider) with the client of A's workspace
//   --path     below the workspace's issuer: /.well-known/openid-configuration (default), /jwks,
//              or /token (client credentials of its web app)
//   --windows  alternations (default 12); --seconds each window's length (default 5; short windows
//              miss the collector's work, which runs while a server idles)
// Each tree runs `bun src/main.ts serve` from its own directory, its workspace created through its
// API by this checkout's scripts/bench/api.ts (a platform account signed up on its hosted pages).
// BENCH_CPU_PROF=<dir>, as for scripts/bench.ts: each side writes a .cpuprofile there when it stops,
// so the two sides' profiles cover the same windows of the same load.
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { Api } from './api'
import { type Check, expect200, expectAccessToken, runCheckedLoad } from './checked-load'
import { cpuWindow } from './cpu'
import { basicAuth, benchServerEnv, freePort, libraryHeaders } from './setup'

const args = process.argv.slice(2)
const flag = (name: string) => {
  const at = args.indexOf(`--${name}`)
  return at >= 0 ? args[at + 1] : undefined
}
const sides = args.filter((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'))
const path = flag('path') ?? '/.well-known/openid-configuration'
const windows = Number(flag('windows') ?? 12)
const seconds = Number(flag('seconds') ?? 5)
const logLevel = flag('log-level') ?? 'info'
const BARE_SIDES = ['bare', 'dressed']
const invalid =
  sides.length !== 2 ||
  BARE_SIDES.includes(sides[0]!) ||
  (sides[1] === 'dressed' && path === '/token') ||
  !(windows >= 1) ||
  !(seconds > 0)
if (invalid) {
  console.error(
    'usage: alternate.ts <tree> <tree|bare|dressed> [--path P] [--windows N] [--seconds S] [--log-level L]',
  )
  process.exit(2)
}
for (const side of sides)
  if (!BARE_SIDES.includes(side) && !existsSync(join(side, 'src/main.ts'))) {
    console.error(`${side}: no src/main.ts (a Gatehouse source tree, bare or dressed)`)
    process.exit(2)
  }

const profile = process.env.BENCH_CPU_PROF
  ? ['--cpu-prof', `--cpu-prof-dir=${resolve(process.env.BENCH_CPU_PROF)}`]
  : []

interface Side {
  /** One window of load: its rate and the server's CPU per request (µs). */
  window(): Promise<{ rps: number; us: number }>
  stop(): Promise<void>
}

function sideOf(
  proc: ReturnType<typeof Bun.spawn>,
  make: () => Request,
  check: Check,
  cleanup = () => {},
): Side {
  return {
    async window() {
      // Unmeasured, its errors ignored: a side idles for two of the other's windows, longer than
      // Bun.serve keeps an idle connection (10 s), and the first request on each closed one fails.
      await runCheckedLoad(make, check, { seconds: 0.3, connections: 32 })
      const done = cpuWindow(proc.pid)
      const load = await runCheckedLoad(make, check, { seconds, connections: 32 })
      const cpu = done().server
      if (load.errors) throw new Error(`${load.errors} errors: ${[...load.errorKinds.keys()].join('; ')}`)
      return { rps: load.rps, us: cpu === null ? Number.NaN : (cpu * 1e6) / load.requests }
    },
    async stop() {
      proc.kill()
      await proc.exited
      cleanup()
    },
  }
}

/** A Gatehouse of `tree` with one workspace; `url` is what its side is asked. */
async function gatehouse(tree: string): Promise<Side & { url: string; client: [string, string] }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-alternate-'))
  const port = await freePort()
  const env = benchServerEnv(dataDir, port, logLevel)
  const base = env.BASE_URL
  // Its access log into a file, as the bench's servers.
  const proc = Bun.spawn([process.execPath, ...profile, 'src/main.ts', 'serve'], {
    cwd: resolve(tree),
    env: { ...process.env, ...env },
    stdout: Bun.file(join(dataDir, 'stdout.log')),
    stderr: 'inherit',
  })
  for (let tries = 0; ; tries++) {
    if (proc.exitCode !== null || tries > 300) throw new Error(`${tree} did not start`)
    const up = await fetch(`${base}/healthz`).then(
      (r) => r.status === 200,
      () => false,
    )
    if (up) break
    await Bun.sleep(100)
  }
  const api = new Api(`http://127.0.0.1:${port}`)
  const ws = await api.createWorkspace(await api.signUpOwner())
  console.log(`${tree}: setup through the API: ${api.statuses}`)
  const url = `${ws.issuer}${path}`
  const make =
    path === '/token'
      ? () =>
          new Request(url, {
            method: 'POST',
            headers: {
              authorization: basicAuth(ws.clientId, ws.clientSecret),
              'content-type': 'application/x-www-form-urlencoded',
            },
            body: 'grant_type=client_credentials',
          })
      : () => new Request(url)
  const side = sideOf(proc, make, path === '/token' ? expectAccessToken : expect200, () =>
    rmSync(dataDir, { recursive: true, force: true }),
  )
  return { ...side, url, client: [ws.clientId, ws.clientSecret] }
}

/** The headers a bare side answers with: the library's (as the bench's), or with `dressed` all but those Bun sets itself. */
const SET_BY_BUN = ['date', 'content-length']
const answered = (headers: Headers, dressed: boolean) =>
  dressed ? [...headers].filter(([k]) => !SET_BY_BUN.includes(k)) : libraryHeaders(headers)

/**
 * The bare side: scripts/bench/baseline-bytes.ts answering what `url` answers (with `dressed`, its
 * every header too), or for /token scripts/bench/baseline-oidc.ts issuing client-credentials tokens
 * to the same client id and secret.
 */
async function bare(
  url: string,
  [clientId, clientSecret]: [string, string],
  dressed: boolean,
): Promise<Side> {
  const tokens = path === '/token'
  const env: Record<string, string> = tokens
    ? { BENCH_CLIENT_ID: clientId, BENCH_CLIENT_SECRET: clientSecret }
    : await (async () => {
        const res = await fetch(url)
        const headers = Object.fromEntries(answered(res.headers, dressed))
        const body = Buffer.from(await res.arrayBuffer()).toString('base64')
        return { BENCH_BODY: body, BENCH_HEADERS: JSON.stringify(headers) }
      })()
  const script = tokens ? 'baseline-oidc.ts' : 'baseline-bytes.ts'
  const proc = Bun.spawn([process.execPath, ...profile, join(import.meta.dir, script)], {
    env: { ...process.env, ...env },
    stdout: 'pipe',
    stderr: 'inherit',
  })
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader()
  let said = ''
  while (!said.includes('"listening"')) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`${script} exited: ${said}`)
    said += new TextDecoder().decode(value)
  }
  void (async () => {
    while (!(await reader.read()).done) {}
  })()
  const at = (JSON.parse(said.split('\n').find((l) => l.includes('"listening"')) ?? '{}') as { url: string })
    .url
  // Asked the same path as A (the request line the same for both sides), which it does not read.
  if (!tokens) return sideOf(proc, () => new Request(`${at}${new URL(url).pathname}`), expect200)
  const authorization = basicAuth(clientId, clientSecret)
  const token = () =>
    new Request(`${at}/token`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    })
  return sideOf(proc, token, expectAccessToken)
}

const a = await gatehouse(sides[0]!)
const b = BARE_SIDES.includes(sides[1]!)
  ? await bare(a.url, a.client, sides[1] === 'dressed')
  : await gatehouse(sides[1]!)
const warm = { A: a, B: b }
// Each side warmed up by one window of the same load, not counted.
for (const side of [a, b]) await side.window()
const seen = { A: [] as { rps: number; us: number }[], B: [] as { rps: number; us: number }[] }
const pairs: number[] = []
try {
  for (let i = 0; i < windows; i++) {
    const order = i % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const)
    const got: Partial<Record<'A' | 'B', { rps: number; us: number }>> = {}
    for (const k of order) got[k] = await warm[k].window()
    seen.A.push(got.A!)
    seen.B.push(got.B!)
    pairs.push(got.B!.rps / got.A!.rps)
    console.log(
      `window ${i + 1}: A ${Math.round(got.A!.rps)} req/s ${got.A!.us.toFixed(1)} µs/req   B ${Math.round(got.B!.rps)} req/s ${got.B!.us.toFixed(1)} µs/req   B/A ${(got.B!.rps / got.A!.rps).toFixed(3)}`,
    )
  }
} finally {
  await a.stop()
  await b.stop()
}
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? Number.NaN
for (const k of ['A', 'B'] as const)
  console.log(
    `${k} (${sides[k === 'A' ? 0 : 1]}): median ${Math.round(median(seen[k].map((s) => s.rps)))} req/s, ${median(seen[k].map((s) => s.us)).toFixed(2)} µs/req`,
  )
console.log(`B / A, median of ${windows} pairs: ${median(pairs).toFixed(3)} of the rate`)
