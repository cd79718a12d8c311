// `bun scripts/bench/cached-answer-floor.ts [--rounds N]`: what each part of a cached discovery or JWKS
// answer costs a Bun.serve handler, measured as server CPU per request under the same closed-loop load
// as the bench (32 connections, 3 s after 1 s of warm-up), one server process per variant:
//   bare   the same bytes with three representation headers (the discovery bench's baseline)
//   url    + reading request.url (the front door reads it to route)
//   hdr    + reading one request header (the incoming X-Request-Id)
//   sec    the bare answer with the plane's security headers (nosniff, frame, referrer, CSP)
//   clone  a cached Response cloned, with a fresh request id set on the copy (how the bridge answers)
//   all    url + hdr + clone: the least a cached answer with a request id can cost
// It shows where the discovery/JWKS target of 0.80 of `bare` stands (README "Performance").
import { runClosedLoop } from './checked-load'
import { cpuWindow } from './cpu'

const variant = process.env.CACHED_ANSWER_VARIANT
if (variant) {
  const body = Buffer.from('x'.repeat(2000))
  const base = {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'public, max-age=60',
    'access-control-allow-origin': '*',
  }
  const sec = {
    ...base,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'content-security-policy':
      "default-src 'none'; style-src 'sha256-MvRiCSRnB1EFlu2fAybSCGvMFfWRYN3E2pdhVjTVWfs='; script-src 'self' 'sha256-fQXPBM5gvcAf1bYvlTk3P3nLbHy2b6Ebr8dgjvSpJKM=' 'sha256-B5B7hp8k3wZD9fSycPmoWnwkJvrhEZPEIxvWzxWLM8w='; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'",
  }
  const cached = new Response(body, { headers: sec })
  const copy = (id: string) => {
    const r = cached.clone()
    r.headers.set('x-request-id', id)
    return r
  }
  const answers: Record<string, (req: Request) => Response> = {
    bare: () => new Response(body, { headers: base }),
    url: (req) => (req.url ? new Response(body, { headers: base }) : new Response(null)),
    hdr: (req) =>
      req.headers.get('x-request-id') === 'x' ? new Response(null) : new Response(body, { headers: base }),
    sec: () => new Response(body, { headers: sec }),
    clone: () => copy(crypto.randomUUID()),
    all: (req) =>
      req.url ? copy(req.headers.get('x-request-id') ?? crypto.randomUUID()) : new Response(null),
  }
  const answer = answers[variant]
  if (!answer) throw new Error(`unknown variant ${variant}`)
  const server = Bun.serve({ port: 0, fetch: answer })
  console.log(server.port)
} else {
  const at = process.argv.indexOf('--rounds')
  const rounds = at >= 0 ? Number(process.argv[at + 1]) : 2
  for (let round = 1; round <= rounds; round++) {
    for (const v of ['bare', 'url', 'hdr', 'sec', 'clone', 'all']) {
      const child = Bun.spawn([process.execPath, import.meta.path], {
        env: { ...process.env, CACHED_ANSWER_VARIANT: v },
        stdout: 'pipe',
      })
      const { value } = await child.stdout.getReader().read()
      const url = `http://127.0.0.1:${Number(new TextDecoder().decode(value).trim())}/`
      const get = async () => {
        await (await fetch(url)).arrayBuffer()
        return null
      }
      await runClosedLoop(get, { seconds: 1, connections: 32 })
      const done = cpuWindow(child.pid)
      const load = await runClosedLoop(get, { seconds: 3, connections: 32 })
      const cpu = done().server
      const perRequest = cpu === null ? 'n/a' : `${((cpu / load.requests) * 1e6).toFixed(1)} µs/req`
      console.log(`round ${round}  ${v.padEnd(6)} ${Math.round(load.rps)} req/s   server ${perRequest}`)
      child.kill()
      await child.exited
    }
  }
}
