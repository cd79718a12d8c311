// `machine-key-exchange`: RFC 7523 exchanges at POST /v1/auth/token, each with a fresh ES256
// assertion of a machine key created through the API, vs their crypto floor: a bare Bun.serve
// handler verifying the same kind of assertion and signing the same kind of token with jose
// (servers/machine-exchange.ts). Assertions are single use (jti): a pool is signed before each
// window, outside it (../machine-keys.ts), so signing takes no CPU from the measured load.
import { gatehouseWithOwnedWorkspace } from '../fixtures'
import { expectAccessToken, formatRate } from '../load'
import { AssertionPool, createMachineKey, exchangeRequest, holderKey } from '../machine-keys'
import type { Options } from '../options'
import { startServerScript } from '../process'
import { httpSide, type Started, throughput } from '../scenario'

/**
 * Assertions signed ahead per second of load: twice the best rate seen, at least twice 10,000/s (a
 * warm-up on a busy machine is slower than the measurement after it). A dry pool would cap the rate.
 */
const POOL = { minRate: 10_000, headroom: 2 }

function exchanges(
  name: string,
  pool: AssertionPool,
  server: { pid: number; stop(): Promise<void> },
  opts: Options,
): Started {
  return httpSide(
    name,
    server,
    () => exchangeRequest(pool.file, pool.take()),
    expectAccessToken('ES256'),
    opts,
    {
      unit: 'exchanges/s',
      async prepare(seconds) {
        const t0 = performance.now()
        await pool.ready(seconds)
        const seen = pool.observedRate ? `, best rate so far ${formatRate(pool.observedRate)}/s` : ''
        return `${pool.size} assertions signed ahead in ${((performance.now() - t0) / 1000).toFixed(1)} s${seen}`
      },
    },
  )
}

export default throughput({
  description:
    'POST /v1/auth/token grant_type=jwt-bearer (RFC 7523) with a fresh ES256 assertion each of a key created through the API (rate-limit bucket, key lookup, signature and claims, a single-use jti row, an ES256 access token) vs a bare Bun.serve handler doing the same crypto with jose, jti single use in memory',
  method:
    'exchanges/s counts 200 answers with an ES256 access token. Target 0.4: the floor is HTTP and two ES256 operations; the product also makes a durable write per exchange (the jti row), takes from the address bucket, reads the key and runs its framework and access log',
  minRate: 3_000,
  minRatio: 0.4,
  baseline: {
    name: 'bare ES256 exchange',
    async start(opts) {
      const key = await holderKey()
      const s = await startServerScript('machine-exchange.ts', {
        BENCH_KEY_ID: key.keyId,
        BENCH_PUBLIC_JWK: key.publicJwk,
      })
      return exchanges(this.name, await AssertionPool.of(key.file(`${s.url}/v1/auth/token`), POOL), s, opts)
    },
  },
  subject: {
    name: 'gatehouse: exchange',
    async start(opts) {
      const { gh, session, ws } = await gatehouseWithOwnedWorkspace(opts, 1)
      try {
        const file = await createMachineKey(gh.url, session, ws.workspaceId, ['workspace:read'])
        return exchanges(this.name, await AssertionPool.of(file, POOL), gh, opts)
      } catch (e) {
        await gh.stop()
        throw e
      }
    },
  },
})
