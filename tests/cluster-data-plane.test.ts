import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Agent } from './support/browserless'
import { type Cluster, startCluster } from './support/cluster'
import { createTestDatabase, testStore } from './support/postgres'

// Issue 56, item 3 (DESIGN "Data plane fairness") on three `serve` nodes of one PostgreSQL database
// behind a round-robin proxy: one client address may take a quarter of an instance's budget, and,
// as the instance's bucket, that share is kept per node with its rate and burst divided by the live
// nodes (50/3 at once on each). The proxy is trusted, so `X-Forwarded-For` names each client. The
// instance is the platform's: the token requests name no client, and each is answered 401 when
// served (the token endpoint's own answer), 429 when the limit refuses it.
const FLOODER = '192.0.2.66'

let cluster: Cluster

/** A token request to the platform's instance from `address`, through the proxy unless `via` is given. */
const platformToken = (address: string, via?: Cluster['nodes'][number]) => {
  const init = {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': address },
    body: 'grant_type=client_credentials&client_id=nobody',
  }
  return via ? via.fetch('/i/platform/token', init) : fetch(`${cluster.baseUrl}/i/platform/token`, init)
}

describe.skipIf(testStore !== 'postgres')(
  'data-plane fairness on a three-node cluster (PostgreSQL leg)',
  () => {
    beforeAll(async () => {
      if (testStore !== 'postgres') return
      cluster = await startCluster(await createTestDatabase(), 3, {
        RATE_LIMIT_DATA_PLANE_RPS: '50',
        RATE_LIMIT_DATA_PLANE_BURST: '200',
        TRUSTED_PROXIES: '127.0.0.1/32',
      })
      // A node counts the live nodes at its first limited request, in the background: each is asked
      // one here, and a browser signs in meanwhile, long before the flood.
      for (const node of cluster.nodes) expect((await platformToken('192.0.2.1', node)).status).toBe(401)
      const page = await new Agent(cluster.baseUrl).follow('/v1/auth/login')
      expect(page.res.status).toBe(200)
    }, 60_000)
    afterAll(async () => {
      await cluster?.stop()
    })

    it("holds one address to its share of 50/3 on each node, leaving another address's requests and a browser's page", async () => {
      // 250 at once from one address, ~83 on each node: each node serves its 16 (50/3) and what its
      // share refilled meanwhile (12.5/s over the three).
      const startedAt = performance.now()
      const flood = await Promise.all(Array.from({ length: 250 }, () => platformToken(FLOODER)))
      const seconds = (performance.now() - startedAt) / 1000
      const statuses = flood.map((r) => r.status)
      const served = statuses.filter((s) => s === 401).length
      const refilled = Math.ceil(12.5 * seconds)
      console.log(
        `cluster: one address's share (50 of 200, 50/3 per node): ${served} of 250 served in ` +
          `${seconds.toFixed(2)} s (${refilled} refilled meanwhile), ${250 - served} refused`,
      )
      expect(statuses.every((s) => s === 401 || s === 429)).toBe(true)
      expect(served).toBeGreaterThanOrEqual(48)
      expect(served).toBeLessThanOrEqual(50 + refilled)
      expect(await flood.find((r) => r.status === 429)!.json()).toMatchObject({
        error: 'temporarily_unavailable',
        error_description: expect.stringContaining('from one client address'),
      })

      // Another address has its own share on every node: 10 on each, all answered by the endpoint.
      const other = await Promise.all(Array.from({ length: 30 }, () => platformToken('203.0.113.9')))
      expect(other.map((r) => r.status)).toEqual(new Array(30).fill(401))
      expect(new Set(cluster.proxy.served.slice(-30)).size).toBe(3)

      // A browser opens the dashboard's sign-in page, its requests spread over the nodes.
      const page = await new Agent(cluster.baseUrl).follow('/v1/auth/login')
      expect(page.res.status).toBe(200)
      expect(await page.res.text()).toContain('<h1>Sign in</h1>')
    }, 60_000)
  },
)
