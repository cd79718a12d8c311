// `bun scripts/bench/cached-answer-floor.ts [--rounds N]`: what each part of a cached discovery or JWKS
// answer costs a Bun.serve handler, built up one part at a time, under the same closed-loop load as
// the bench (32 connections, 4 s after 1 s of warm-up), one server process per variant, the variants
// of a round one after another. Each prints its rate and the server's CPU per request; at the end,
// the median rate over the rounds as a ratio of `bare` (the discovery bench's baseline) and the
// median CPU per request. The rates of one variant differ by 10-20% between rounds on a shared
// 2-core machine: read the CPU per request, and run 5 rounds or more.
//   bare     the bytes with three representation headers, from a headers object
//   headers  the bytes with every header Gatehouse sends (the plane's security headers and a request
//            id), from a headers object made into the response's headers on every request
//   clone    the same answer cloned from one cached Response (how the bridge answers)
//   hdr      clone + reading one request header (an incoming X-Request-Id)
//   id       clone + a fresh request id set on the copy
//   log      id + the access-log record of src/shared/logger.ts (stdout into a file, as the bench)
//   front    log + request.url and a route remembered per URL (what the front door does)
//   loaded   front, in a process that also runs a whole Gatehouse node (SQLite): the process's floor
//   paced    loaded, with the front door's eden collection every 2,000 requests (src/shared/nursery.ts)
// It shows where the discovery/JWKS target of 0.80 of `bare` stands (docs/performance.md).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runClosedLoop } from './checked-load'
import { cpuWindow } from './cpu'

const VARIANTS = ['bare', 'headers', 'clone', 'hdr', 'id', 'log', 'front', 'loaded', 'paced'] as const
type Variant = (typeof VARIANTS)[number]

const variant = process.env.CACHED_ANSWER_VARIANT as Variant | undefined
if (variant) {
  const dataDir = process.env.CACHED_ANSWER_DIR ?? ''
  if (variant === 'loaded' || variant === 'paced') {
    Object.assign(process.env, { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' })
    const { loadConfig } = await import('../../src/config')
    const { startServer } = await import('../../src/server')
    await startServer(loadConfig(), { workerUrl: new URL('../../src/jobs/worker.ts', import.meta.url) })
  }
  const { createLogger } = await import('../../src/shared/logger')
  const { nurseryPacer } = await import('../../src/shared/nursery')
  const log = createLogger('info')
  const body = Buffer.from('x'.repeat(2000))
  const base = {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'public, max-age=60',
    'access-control-allow-origin': '*',
  }
  const all = {
    ...base,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'content-security-policy':
      "default-src 'none'; style-src 'sha256-MvRiCSRnB1EFlu2fAybSCGvMFfWRYN3E2pdhVjTVWfs='; script-src 'self' 'sha256-fQXPBM5gvcAf1bYvlTk3P3nLbHy2b6Ebr8dgjvSpJKM=' 'sha256-B5B7hp8k3wZD9fSycPmoWnwkJvrhEZPEIxvWzxWLM8w='; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'",
  }
  const cached = new Response(body, { headers: all })
  const withId = (id: string) => {
    const r = cached.clone()
    r.headers.set('x-request-id', id)
    return r
  }
  const path = '/i/0198a2b4-1111-4222-8333-123456789abc/.well-known/openid-configuration'
  const logged = (id: string, method: string, pathname: string, startedAt: number) => {
    const response = withId(id)
    log.request(id, method, pathname, 200, Math.round((performance.now() - startedAt) * 100) / 100)
    return response
  }
  const routes = new Map<string, { pathname: string }>()
  const front = (req: Request) => {
    const startedAt = performance.now()
    const raw = req.url
    let route = routes.get(raw)
    if (!route) {
      route = { pathname: new URL(raw).pathname }
      routes.set(raw, route)
    }
    return logged(crypto.randomUUID(), req.method, route.pathname, startedAt)
  }
  const answers: Record<Variant, (req: Request) => Response> = {
    bare: () => new Response(body, { headers: base }),
    headers: () => new Response(body, { headers: { ...all, 'x-request-id': crypto.randomUUID() } }),
    clone: () => cached.clone(),
    hdr: (req) => (req.headers.get('x-request-id') === 'x' ? new Response(null) : cached.clone()),
    id: () => withId(crypto.randomUUID()),
    log: (req) => logged(crypto.randomUUID(), req.method, path, performance.now()),
    front,
    loaded: front,
    paced: front,
  }
  const answer = answers[variant]
  const pace = nurseryPacer()
  const paced = (req: Request) => {
    pace()
    return answer(req)
  }
  const fetch = variant === 'paced' ? paced : answer
  const server = Bun.serve({ port: 0, reusePort: false, fetch })
  console.error(`port ${server.port}`)
} else {
  const at = process.argv.indexOf('--rounds')
  const rounds = at >= 0 ? Number(process.argv[at + 1]) : 3
  const rates = new Map<Variant, number[]>()
  const costs = new Map<Variant, number[]>()
  for (let round = 1; round <= rounds; round++) {
    for (const v of VARIANTS) {
      const dir = mkdtempSync(join(tmpdir(), 'gatehouse-floor-'))
      const child = Bun.spawn([process.execPath, import.meta.path], {
        env: { ...process.env, CACHED_ANSWER_VARIANT: v, CACHED_ANSWER_DIR: dir },
        stdout: Bun.file(join(dir, 'stdout.log')),
        stderr: 'pipe',
      })
      const reader = child.stderr.getReader()
      let said = ''
      while (!/port \d+/.test(said)) {
        const { value, done } = await reader.read()
        if (done) throw new Error(`variant ${v} did not start: ${said}`)
        said += new TextDecoder().decode(value)
      }
      const url = `http://127.0.0.1:${/port (\d+)/.exec(said)?.[1]}/i/x/.well-known/openid-configuration`
      const get = async () => {
        await (await fetch(url)).arrayBuffer()
        return null
      }
      await runClosedLoop(get, { seconds: 1, connections: 32 })
      const done = cpuWindow(child.pid)
      const load = await runClosedLoop(get, { seconds: 4, connections: 32 })
      const cpu = done().server
      const perRequest = cpu === null ? 'n/a' : `${((cpu / load.requests) * 1e6).toFixed(1)} µs/req`
      console.log(`round ${round}  ${v.padEnd(8)} ${Math.round(load.rps)} req/s   server ${perRequest}`)
      rates.set(v, [...(rates.get(v) ?? []), load.rps])
      if (cpu !== null) costs.set(v, [...(costs.get(v) ?? []), (cpu / load.requests) * 1e6])
      child.kill()
      await child.exited
      rmSync(dir, { recursive: true, force: true })
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0
  const bare = median(rates.get('bare') ?? [])
  for (const [v, xs] of rates) {
    const cost = costs.get(v)
    const us = cost ? `, server ${median(cost).toFixed(1)} µs/req (median)` : ''
    console.log(`${v.padEnd(8)} ${(median(xs) / bare).toFixed(2)} of bare (median rate)${us}`)
  }
}
