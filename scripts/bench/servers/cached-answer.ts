// A cached discovery answer served by a bare Bun.serve handler, built up one part at a time: the
// variant CACHED_ANSWER_VARIANT (scenarios/cached-answer-floor.ts lists them); the `loaded` ones run
// a whole Gatehouse node (SQLite in CACHED_ANSWER_DIR) in the same process. The access log goes to
// stdout (a file), the `listening` line to stderr.
import { VARIANTS } from '../scenarios/cached-answer-floor'

type Variant = (typeof VARIANTS)[number]
const variant = process.env.CACHED_ANSWER_VARIANT as Variant
if (!VARIANTS.includes(variant)) {
  console.error(`CACHED_ANSWER_VARIANT is one of ${VARIANTS.join(', ')}`)
  process.exit(2)
}
const dataDir = process.env.CACHED_ANSWER_DIR ?? ''
if (variant === 'loaded' || variant === 'paced') {
  Object.assign(process.env, { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' })
  const { loadConfig } = await import('../../../src/config')
  const { startServer } = await import('../../../src/server')
  await startServer(loadConfig(), { workerUrl: new URL('../../../src/jobs/worker.ts', import.meta.url) })
}
const { createLogger } = await import('../../../src/shared/logger')
const { gcPacer } = await import('../../../src/shared/gc-pacing')
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
const pace = gcPacer()
const paced = (req: Request) => {
  pace()
  return answer(req)
}
const fetch = variant === 'paced' ? paced : answer
const server = Bun.serve({ port: 0, reusePort: false, fetch })
console.error(JSON.stringify({ msg: 'listening', url: `http://127.0.0.1:${server.port}` }))
