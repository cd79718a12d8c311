import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type Cluster, type ClusterNode, startCluster, until } from './support/cluster'
import { createTestDatabase, testStore } from './support/postgres'
import type { TestServer } from './support/server'
import { type Json, type PlatformUser, signUpUser } from './support/users'

// Issue 26: the rate limits on three `serve` nodes of one PostgreSQL database behind a round-robin
// proxy (every request on the next node). The control plane's per-minute buckets are rows, so the
// call past a workspace's limit is refused whichever node it lands on; the data plane's bucket is each
// node's own, with the rate and burst divided by the live nodes: its error is measured here.
// The workspace limit is 6 a minute here, not SPEC's 60: the bucket gives one call back every
// period / limit (GCRA), 1 s at 60 — less than these calls take through the proxy on a busy CI
// machine, which then rightly served the "refused" call — and 10 s at 6.
const WORKSPACE_PER_MINUTE = 6

let cluster: Cluster
let owner: PlatformUser

async function call(path: string, init: RequestInit = {}, via?: ClusterNode) {
  const headers = { accept: 'application/json', authorization: `Bearer ${owner.bearer}`, ...init.headers }
  const res = via
    ? await via.fetch(path, { ...init, headers })
    : await fetch(`${cluster.baseUrl}${path}`, { ...init, headers })
  const text = await res.text()
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : null) as Json }
}

/** A new workspace of the owner's, once active: polled through the list (the organisation's bucket), not its own. */
async function activeWorkspace(name: string): Promise<{ id: string; auth_url: string }> {
  const created = await call('/v1/workspaces', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  })
  expect(created.status).toBe(201)
  const { id } = created.body
  await until(
    'the workspace to be active',
    async () =>
      (await call('/v1/workspaces')).body.items.some((w: Json) => w.id === id && w.state === 'active'),
    20_000,
    200,
  )
  return created.body
}

/** Posts the dashboard's "Create a tenant" form as htmx does, with the session's CSRF token: through the proxy, or to one node. */
function createTenantForm(workspaceId: string, slug: string, via?: ClusterNode) {
  const path = `/app/workspaces/${workspaceId}/tenants`
  const init = {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'hx-request': 'true' },
    body: new URLSearchParams({ _csrf: owner.csrf, name: slug, slug }),
  }
  if (!via) return owner.agent.request(path, init)
  const cookie = owner.agent.cookieHeader(new URL(path, cluster.baseUrl))
  return via.fetch(path, { ...init, headers: { ...init.headers, cookie } })
}

describe.skipIf(testStore !== 'postgres')('rate limits on a three-node cluster (PostgreSQL leg)', () => {
  beforeAll(async () => {
    if (testStore !== 'postgres') return
    cluster = await startCluster(await createTestDatabase(), 3, {
      RATE_LIMIT_WORKSPACE_PER_MINUTE: String(WORKSPACE_PER_MINUTE),
      RATE_LIMIT_DATA_PLANE_RPS: '50',
      RATE_LIMIT_DATA_PLANE_BURST: '200',
      // The instance's budget split across nodes, apart from the per-address share and the page
      // reserve (tests/cluster-data-plane.test.ts): this burst comes from one address.
      RATE_LIMIT_DATA_PLANE_ADDRESS_SHARE: '1',
      RATE_LIMIT_DATA_PLANE_PAGE_RESERVE: '0',
    })
    owner = await signUpUser(
      { baseUrl: cluster.baseUrl } as TestServer,
      { email: 'lim@example.com', password: 'a long password 1', name: 'Lim' },
      { bearer: true },
    )
  }, 60_000)
  afterAll(async () => {
    await cluster?.stop()
  })

  it("refuses a workspace's call past its limit on every node, then the data plane's burst on the nodes' shares", async () => {
    const ws = await activeWorkspace('Limited')
    const app = await call(`/v1/workspaces/${ws.id}/apps`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'svc', redirect_uris: ['https://rp.example.com/cb'] }),
    })
    expect(app.status).toBe(201)

    const first = await call(`/v1/workspaces/${ws.id}`)
    expect(first.status).toBe(200)
    expect(first.headers.get('x-ratelimit-limit')).toBe(String(WORKSPACE_PER_MINUTE))
    const left = Number(first.headers.get('x-ratelimit-remaining'))
    expect(left).toBe(WORKSPACE_PER_MINUTE - 2) // the app created, and this read
    const served = new Set<string>()
    for (let i = 0; i < left; i++) {
      const from = cluster.proxy.served.length
      const listed = await call(`/v1/workspaces/${ws.id}/apps`)
      expect(listed.status).toBe(200)
      // One count per call, whichever node took it: the bucket is the one shared row.
      expect(Number(listed.headers.get('x-ratelimit-remaining'))).toBe(left - 1 - i)
      served.add(String(cluster.proxy.served[from]))
    }
    expect(served.size).toBe(3)
    for (const node of cluster.nodes) {
      const refused = await call(`/v1/workspaces/${ws.id}`, {}, node)
      expect(refused.status).toBe(429)
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    }

    // The data plane: 250 client-credentials requests at once through the proxy.
    const basic = `Basic ${btoa(`${app.body.client_id}:${app.body.client_secret}`)}`
    const token = () =>
      fetch(`${ws.auth_url}/token`, {
        method: 'POST',
        headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials',
      }).then((r) => r.status)
    const startedAt = performance.now()
    const statuses = await Promise.all(Array.from({ length: 250 }, token))
    const seconds = (performance.now() - startedAt) / 1000
    const ok = statuses.filter((s) => s === 200).length
    // The buckets refill at 50/s (50/3 per node) while the 250 requests are served: on a busy
    // machine that takes a while, and what refilled meanwhile is rightly served too.
    const refilled = Math.ceil(50 * seconds)
    console.log(
      `cluster: data plane burst 200 (3 nodes, 200/3 each): ${ok} of 250 served in ${seconds.toFixed(2)} s ` +
        `(${refilled} refilled meanwhile), ${250 - ok} refused`,
    )
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true)
    expect(ok).toBeGreaterThanOrEqual(180)
    expect(ok).toBeLessThanOrEqual(220 + refilled)
  }, 60_000)

  // Issue 56: the dashboard's writes spend the same shared rows as the API's.
  it("refuses a workspace's dashboard write past its limit on every node, and its API calls with it", async () => {
    const ws = (await activeWorkspace('Limited by forms')).id
    const served = new Set<string>()
    for (let i = 1; i <= WORKSPACE_PER_MINUTE; i++) {
      const from = cluster.proxy.served.length
      const res = await createTenantForm(ws, `form-${i}`)
      expect(res.status).toBe(200)
      expect(Number(res.headers.get('x-ratelimit-remaining'))).toBe(WORKSPACE_PER_MINUTE - i)
      served.add(String(cluster.proxy.served[from]))
    }
    expect(served.size).toBe(3)
    for (const node of cluster.nodes) {
      const refused = await createTenantForm(ws, `refused-${node.index}`, node)
      expect(refused.status).toBe(429)
      const wait = Number(refused.headers.get('retry-after'))
      expect(wait).toBeGreaterThanOrEqual(1)
      expect(await refused.text()).toContain(`Too many changes in a minute — try again in ${wait} s.`)
      expect((await call(`/v1/workspaces/${ws}`, {}, node)).status).toBe(429)
    }
  }, 60_000)
})
