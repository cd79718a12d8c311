// The bound of the sign-in scenario: argon2id verifies of the hash a sign-in checks, in a process of
// their own (so the load generator does not share its CPU), started with BENCH_PASSWORD and
// BENCH_HASH. Prints a `listening` line like the other baselines; POST /run?seconds=N&concurrency=N
// runs that many Bun.password.verify calls at once (Bun runs them on its thread pool) for that long,
// each required to succeed, and answers the result as JSON (a CheckedLoadResult, errorKinds as pairs).
import { runClosedLoop } from '../load'

const password = process.env.BENCH_PASSWORD
const hash = process.env.BENCH_HASH
if (!password || !hash) {
  console.error('hash-bound.ts needs BENCH_PASSWORD and BENCH_HASH')
  process.exit(2)
}

const server = Bun.serve({
  port: 0,
  reusePort: false,
  // A run answers after `seconds`: no idle timeout may cut it short.
  idleTimeout: 0,
  async fetch(req) {
    const url = new URL(req.url)
    if (req.method !== 'POST' || url.pathname !== '/run') return new Response('not found', { status: 404 })
    const seconds = Number(url.searchParams.get('seconds'))
    const concurrency = Number(url.searchParams.get('concurrency'))
    if (!(seconds > 0) || !(concurrency >= 1)) return new Response('bad parameters', { status: 400 })
    const result = await runClosedLoop(
      async () => ((await Bun.password.verify(password, hash)) ? null : 'the password did not verify'),
      { seconds, connections: concurrency },
    )
    return Response.json({ ...result, errorKinds: [...result.errorKinds] })
  },
})
console.log(JSON.stringify({ msg: 'listening', url: `http://127.0.0.1:${server.port}` }))
