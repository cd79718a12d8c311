// The baseline of the discovery and jwks scenarios: a bare Bun.serve handler answering every GET (asked the subject's path) with
// the very bytes the measured endpoint answers (BENCH_BODY, base64) and the headers oidc-provider
// answers with them (BENCH_HEADERS, JSON: setup.ts LIBRARY_HEADERS, content type and CORS), from memory. No framework, no middleware, no
// security headers, no request id, no access log: what serving those bytes over HTTP costs at least.
const body = Buffer.from(process.env.BENCH_BODY ?? '', 'base64')
const headers = JSON.parse(process.env.BENCH_HEADERS ?? '{}') as Record<string, string>
if (!body.byteLength) {
  console.error('baseline-bytes.ts needs BENCH_BODY')
  process.exit(2)
}

// A module (not a script sharing the other baselines' globals).
export {}

const server = Bun.serve({ port: 0, reusePort: false, fetch: () => new Response(body, { headers }) })
console.log(JSON.stringify({ msg: 'listening', url: `http://127.0.0.1:${server.port}` }))
