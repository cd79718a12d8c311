import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { SQL } from 'bun'
import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from 'jose'
import * as oidc from 'openid-client'
import { solidPng } from './support/branding'
import { sharedBrowser, signUpInBrowser } from './support/browser'
import { Agent } from './support/browserless'
import { type Cluster, type ClusterNode, startCluster, until } from './support/cluster'
import { exchangeForm, type KeyFile, signAssertion } from './support/machine-keys'
import { createTestDatabase, testStore } from './support/postgres'
import type { TestServer } from './support/server'
import { startSmtpServer } from './support/smtp'
import { PRICES, type StripeStandIn, startStripeStandIn } from './support/stripe-stand-in'
import { type Json, type PlatformUser, signUpEndUser, signUpUser } from './support/users'

// Three `gatehouse serve` processes on one PostgreSQL database behind one BASE_URL, a round-robin
// proxy: every request of a flow lands on the next node. The cases build on each other (the
// workspace of one is the subject of the next), in file order.

const RP = 'https://rp.example.com'
const JOBS = 500
const HOUR = 3_600_000
const REVOKE_ROTATED = 'machine_key.revoke_rotated'

let cluster: Cluster
let sql: SQL
let owner: PlatformUser
let node1: ClusterNode
let node2: ClusterNode
let node3: ClusterNode
let ws: { id: string; auth_url: string }
let stripe: StripeStandIn

/** A JSON call with the owner's bearer token, through the proxy or to one node. */
async function api(
  via: ClusterNode | null,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Json }> {
  const init: RequestInit = {
    method,
    headers: {
      accept: 'application/json',
      authorization: `Bearer ${owner.bearer}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  }
  const res = via ? await via.fetch(path, init) : await fetch(`${cluster.baseUrl}${path}`, init)
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : null }
}

/** openid-client's requests sent to one node (addressed as BASE_URL), not through the proxy. */
const atNode =
  (node: ClusterNode): oidc.CustomFetch =>
  (url, options) =>
    node.fetch(url, {
      method: options.method,
      headers: options.headers as Record<string, string>,
      body: options.body as BodyInit | undefined,
      signal: options.signal,
    })

const discover = (app: { client_id: string; client_secret: string }, node?: ClusterNode) =>
  oidc.discovery(
    new URL(ws.auth_url),
    app.client_id,
    app.client_secret,
    oidc.ClientSecretBasic(app.client_secret),
    { execute: [oidc.allowInsecureRequests], ...(node ? { [oidc.customFetch]: atNode(node) } : {}) },
  )

/**
 * A new web app of the workspace (created at node 2), and a sign-in page of it opened on nodes 2 and
 * 3 directly: for each, `get(url = the page)` with that interaction's cookies, at that node.
 */
async function signInPagesOnNodes2And3(appName: string) {
  const created = await api(node2, 'POST', `/v1/workspaces/${ws.id}/apps`, {
    name: appName,
    app_type: 'web',
    redirect_uris: [`${RP}/cb`],
  })
  expect(created.status).toBe(201)
  const config = await discover(created.body as { client_id: string; client_secret: string })
  const authorize = oidc.buildAuthorizationUrl(config, {
    redirect_uri: `${RP}/cb`,
    scope: 'openid',
    code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
    code_challenge_method: 'S256',
  }).href
  return Promise.all(
    [node2, node3].map(async (n) => {
      const res = await n.fetch(authorize, { redirect: 'manual' })
      expect(res.status).toBe(303)
      const cookie = res.headers
        .getSetCookie()
        .map((c) => c.split(';')[0])
        .join('; ')
      const at = new URL(res.headers.get('location') ?? '', authorize).href
      const get = (url = at) => n.fetch(url, { headers: { cookie }, redirect: 'manual' })
      return { n, at, get }
    }),
  )
}

/** Each line of every node's journal: `start|done <job id> <attempt>`, with the node it ran on. */
function journalLines(): { node: number; what: string; id: string; attempt: number }[] {
  return cluster.nodes.flatMap((n) =>
    n
      .journal()
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [what, id, attempt] = line.split(' ')
        return { node: n.index, what: what!, id: id!, attempt: Number(attempt) }
      }),
  )
}

/** A fresh assertion (its own jti) signed with the key file, exchanged at one node's POST /v1/auth/token. */
async function exchangeAt(node: ClusterNode, file: KeyFile): Promise<{ status: number; body: Json }> {
  const res = await node.fetch(file.token_url, {
    method: 'POST',
    body: exchangeForm(await signAssertion(file)),
  })
  return { status: res.status, body: await res.json() }
}

const countDone = async (ids: string[]) =>
  Number((await sql`SELECT count(*)::int AS n FROM jobs WHERE id IN ${sql(ids)} AND status = 'done'`)[0].n)

describe.skipIf(testStore !== 'postgres')(
  'a three-node cluster behind a round-robin proxy (PostgreSQL leg)',
  () => {
    beforeAll(async () => {
      if (testStore !== 'postgres') return
      const databaseUrl = await createTestDatabase()
      sql = new SQL({ url: databaseUrl, max: 2 })
      // Billing configured on every node: Stripe's events are signed by this process's stand-in.
      stripe = startStripeStandIn(Date.now)
      // A short lease: a killed node's job is taken over within seconds.
      cluster = await startCluster(databaseUrl, 3, {
        JOB_LEASE_SECONDS: '2',
        // Webhooks to a receiver of this process, and a cap small enough to meet in a few seconds.
        WEBHOOKS_ALLOW_HTTP: 'true',
        WEBHOOKS_ALLOW_PRIVATE: 'true',
        WEBHOOK_RATE_PER_MINUTE: '30',
        // A workspace's oidc IdP is another workspace's instance, on this loopback cluster.
        IDPS_ALLOW_HTTP: 'true',
        IDPS_ALLOW_PRIVATE: 'true',
        // A workspace's own mail server is a test SMTP server on loopback.
        SMTP_ALLOW_PRIVATE: 'true',
        ...stripe.env,
      })
      ;[node1, node2, node3] = cluster.nodes as [ClusterNode, ClusterNode, ClusterNode]
    }, 60_000)

    afterAll(async () => {
      await cluster?.stop()
      await sql?.close()
      stripe?.stop()
    })

    it('signs a dashboard user up and in through the hosted pages in Chromium, each request on the next node', async () => {
      const user = { email: 'grace@example.com', password: 'cobol-compiler-59', name: 'Grace Hopper' }
      const browser = await sharedBrowser()
      const base = cluster.baseUrl

      const from = cluster.proxy.served.length
      const signUp = await browser.newContext()
      const page = await signUp.newPage()
      await page.goto(`${base}/v1/auth/login`)
      await signUpInBrowser(page, { name: user.name, email: user.email, password: user.password })
      await page.waitForURL(`${base}/app/workspaces/new`)
      const me = await page.evaluate(async () => (await fetch('/v1/auth/me')).json())
      expect(me).toMatchObject({ email: user.email, auth: 'session' })
      await signUp.close()
      const signUpServed = cluster.proxy.served.slice(from)

      const from2 = cluster.proxy.served.length
      const signIn = await browser.newContext()
      const again = await signIn.newPage()
      await again.goto(`${base}/v1/auth/login`)
      await again.getByLabel('Email').fill(user.email)
      await again.getByLabel('Password').fill(user.password)
      await again.getByRole('button', { name: 'Sign in' }).click()
      await again.waitForURL(new RegExp(`^${base}/app/`))
      const me2 = await again.evaluate(async () => (await fetch('/v1/auth/me')).json())
      expect(me2).toMatchObject({ id: me.id, email: user.email, auth: 'session' })
      await signIn.close()
      const signInServed = cluster.proxy.served.slice(from2)

      // Round robin: each flow's requests were spread over all three nodes.
      for (const served of [signUpServed, signInServed]) expect(new Set(served).size).toBe(3)
    }, 60_000)

    it('creates a workspace through the proxy; it becomes active and reads the same on each node', async () => {
      owner = await signUpUser(
        { baseUrl: cluster.baseUrl } as TestServer,
        { email: 'ada@example.com', password: 'analytical-engine-1843', name: 'Ada Lovelace' },
        { bearer: true },
      )
      const created = await api(null, 'POST', '/v1/workspaces', { name: 'Analytical' })
      expect(created.status).toBe(201)
      expect(created.body.state).toBe('provisioning')
      const id = created.body.id as string
      // Polled through the proxy: each poll is answered by another node.
      await until(
        'the workspace to be active',
        async () => (await api(null, 'GET', `/v1/workspaces/${id}`)).body.state === 'active',
        20_000,
        50,
      )

      const reads = await Promise.all(cluster.nodes.map((n) => api(n, 'GET', `/v1/workspaces/${id}`)))
      for (const r of reads) expect(r.status).toBe(200)
      expect(reads[0]!.body).toMatchObject({
        id,
        name: 'Analytical',
        state: 'active',
        auth_url: `${cluster.baseUrl}/i/${id}`,
      })
      expect(reads[1]!.body).toEqual(reads[0]!.body)
      expect(reads[2]!.body).toEqual(reads[0]!.body)
      ws = reads[0]!.body
      // Each node serves its identity instance, with the same keys.
      const jwks = await Promise.all(
        cluster.nodes.map(async (n) => (await n.fetch(`${ws.auth_url}/jwks`)).json()),
      )
      expect(jwks[1]).toEqual(jwks[0])
      expect(jwks[2]).toEqual(jwks[0])
    }, 60_000)

    it('an app created on node 2 completes code + PKCE through the proxy, client credentials at node 3, and node 1 accepts the token', async () => {
      const created = await api(node2, 'POST', `/v1/workspaces/${ws.id}/apps`, {
        name: 'Difference Engine',
        app_type: 'web',
        redirect_uris: [`${RP}/cb`],
      })
      expect(created.status).toBe(201)
      const app = created.body as { client_id: string; client_secret: string; issuer: string }
      expect(app.issuer).toBe(ws.auth_url)

      // Authorization code + PKCE, every request through the proxy.
      const config = await discover(app)
      const verifier = oidc.randomPKCECodeVerifier()
      const state = oidc.randomState()
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: `${RP}/cb`,
        scope: 'openid email',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
      })
      // A login policy changed at node 1 acts at every node at once: the end user below is signed in
      // without verifying the address (the default would stop at the verify page).
      const policy = await api(node1, 'PATCH', `/v1/workspaces/${ws.id}/login-policy`, {
        require_email_verification: false,
      })
      expect(policy.status).toBe(200)
      const back = await signUpEndUser(
        new Agent(cluster.baseUrl),
        url,
        { email: 'charles@example.com', password: 'babbage-engine-1822', name: 'Charles Babbage' },
        RP,
      )
      const tokens = await oidc.authorizationCodeGrant(config, back, {
        pkceCodeVerifier: verifier,
        expectedState: state,
        idTokenExpected: true,
      })
      expect(tokens.claims()?.email).toBe('charles@example.com')

      // Client credentials at node 3 alone.
      const atNode3 = await discover(app, node3)
      const cc = await oidc.clientCredentialsGrant(atNode3)
      expect(cc.access_token.split('.')).toHaveLength(3)

      // Node 1 verifies it against its own JWKS, and its introspection says active.
      const jwks = (await (await node1.fetch(`${ws.auth_url}/jwks`)).json()) as JSONWebKeySet
      const { payload } = await jwtVerify(cc.access_token, createLocalJWKSet(jwks), {
        issuer: ws.auth_url,
        audience: ws.auth_url,
      })
      expect(payload.client_id).toBe(app.client_id)
      // The code flow's (opaque) access token, issued through the proxy: node 1's introspection says
      // active (oidc-provider does not introspect JWT access tokens) and its userinfo answers.
      const atNode1 = await discover(app, node1)
      expect(await oidc.tokenIntrospection(atNode1, tokens.access_token)).toMatchObject({
        active: true,
        client_id: app.client_id,
      })
      const sub = tokens.claims()!.sub
      expect(await oidc.fetchUserInfo(atNode1, tokens.access_token, sub)).toMatchObject({
        sub,
        email: 'charles@example.com',
      })
    }, 60_000)

    it("a login policy changed on node 1 acts on nodes 2 and 3's hosted pages at once", async () => {
      // An interaction started on each node directly: its sign-in page offers to create an account.
      const interactions = await signInPagesOnNodes2And3('Analytical Engine')
      for (const { get } of interactions) {
        const page = await get()
        expect(page.status).toBe(200)
        expect(await page.text()).toContain('Create an account')
      }
      const patched = await api(node1, 'PATCH', `/v1/workspaces/${ws.id}/login-policy`, {
        allow_registration: false,
      })
      expect(patched.status).toBe(200)
      const answeredAt = performance.now()
      await Promise.all(
        interactions.map(({ n, at, get }) =>
          until(
            `node ${n.index} to refuse sign-up`,
            async () => {
              const signUp = await get(`${at}/signup`)
              const page = await (await get(at)).text()
              return signUp.status === 403 && !page.includes('Create an account')
            },
            5_000,
            5,
          ),
        ),
      )
      const latency = performance.now() - answeredAt
      console.log(
        `cluster: a login policy change on node 1 acted on nodes 2 and 3 after ${latency.toFixed(0)} ms`,
      )
      expect(latency).toBeLessThan(1000)
      expect(
        (await api(node1, 'PATCH', `/v1/workspaces/${ws.id}/login-policy`, { allow_registration: true }))
          .status,
      ).toBe(200)
    }, 30_000)

    it('a machine key created through the proxy exchanges at node 1; deleted at node 2, node 3 refuses it at once', async () => {
      const keys = `/v1/workspaces/${ws.id}/machine-keys`
      const created = await api(null, 'POST', keys, { name: 'cluster-ci', scopes: ['workspace:read'] })
      expect(created.status).toBe(201)
      const file = created.body.key as KeyFile
      expect(file).toMatchObject({
        type: 'service_account',
        key_id: created.body.id,
        workspace_id: ws.id,
        token_url: `${cluster.baseUrl}/v1/auth/token`,
      })

      const first = await exchangeAt(node1, file)
      expect(first.status).toBe(200)
      expect(first.body).toMatchObject({ token_type: 'Bearer', scope: 'workspace:read' })
      // The token node 1 issued (platform-signed) is taken by the other nodes.
      for (const n of [node2, node3]) {
        const res = await n.fetch(keys, {
          headers: { accept: 'application/json', authorization: `Bearer ${first.body.access_token}` },
        })
        expect(res.status).toBe(200)
      }

      expect(await api(node2, 'DELETE', `${keys}/${file.key_id}`)).toEqual({
        status: 200,
        body: { deleted: true },
      })
      // At once, no waiting: node 3 reads the revocation from the database.
      const refused = await exchangeAt(node3, file)
      expect(refused.status).toBe(400)
      expect(refused.body.error).toBe('invalid_grant')
      expect(refused.body.error_description).toStartWith('This key was revoked at ')
      // Node 1 imported the key's public half for the first exchange; it refuses it all the same.
      for (const n of [node1, node2]) {
        const again = await exchangeAt(n, file)
        expect({ node: n.index, status: again.status, error: again.body.error }).toEqual({
          node: n.index,
          status: 400,
          error: 'invalid_grant',
        })
      }
    }, 30_000)

    it("a rotation's 24 h revocation job runs exactly once across the nodes; the old key is then refused at every node", async () => {
      const keys = `/v1/workspaces/${ws.id}/machine-keys`
      const created = await api(null, 'POST', keys, { name: 'cluster-deploy', scopes: ['workspace:write'] })
      expect(created.status).toBe(201)
      const old = created.body.key as KeyFile
      const rotated = await api(null, 'POST', `${keys}/${old.key_id}/rotate`)
      expect(rotated.status).toBe(201)
      const fresh = rotated.body.key as KeyFile
      expect(fresh.key_id).not.toBe(old.key_id)
      expect((await api(node3, 'GET', `${keys}/${old.key_id}`)).body).toMatchObject({
        status: 'rotating',
        revokes_at: expect.any(String),
      })
      // Within its grace the old key still works, at every node.
      for (const n of cluster.nodes) expect((await exchangeAt(n, old)).status).toBe(200)

      // One job, due when the key's grace ends, 24 hours on.
      const jobOf = () =>
        sql`SELECT id, status, attempts, run_at, locked_by FROM jobs
            WHERE kind = ${REVOKE_ROTATED} AND payload::jsonb ->> 'keyId' = ${old.key_id}`
      const [key] = await sql`SELECT revokes_at FROM machine_keys WHERE id = ${old.key_id}`
      expect(key.revokes_at).toBeGreaterThan(Date.now() + 23 * HOUR)
      const queued = await jobOf()
      expect(queued).toHaveLength(1)
      expect(queued[0]).toMatchObject({ status: 'queued', attempts: 0, run_at: key.revokes_at })

      // The nodes run on the real clock: the grace's end and the job are moved into the past together.
      const past = Date.now() - 1000
      await sql.begin(async (tx) => {
        const keysMoved = await tx`UPDATE machine_keys SET revokes_at = ${past} WHERE id = ${old.key_id}`
        const jobsMoved =
          await tx`UPDATE jobs SET run_at = ${past} WHERE kind = ${REVOKE_ROTATED} AND id = ${queued[0].id} AND status = 'queued'`
        expect([keysMoved.count, jobsMoved.count]).toEqual([1, 1])
      })
      await until(
        'the revocation job to be done',
        async () => (await jobOf())[0]?.status === 'done',
        15_000,
        50,
      )
      const [done] = await jobOf()
      expect(done).toMatchObject({ id: queued[0].id, status: 'done', attempts: 1 })
      expect(String(done.locked_by)).toMatch(/^cluster-node-[123]:/)
      // A lease later (2 s), no other node has taken it again.
      await Bun.sleep(2500)
      expect(await jobOf()).toEqual([done])

      const [revoked] =
        await sql`SELECT revokes_at, revoked_at, revoked_reason FROM machine_keys WHERE id = ${old.key_id}`
      expect(revoked).toEqual({ revokes_at: past, revoked_at: past, revoked_reason: 'rotated' })
      for (const n of cluster.nodes) {
        const refused = await exchangeAt(n, old)
        expect({ node: n.index, status: refused.status, error: refused.body.error }).toEqual({
          node: n.index,
          status: 400,
          error: 'invalid_grant',
        })
        expect(refused.body.error_description).toContain('rotated out')
        expect(refused.body.error_description).toContain(fresh.key_id)
      }
      // Its replacement works on, and is the workspace's only key now.
      for (const n of cluster.nodes) expect((await exchangeAt(n, fresh)).status).toBe(200)
      expect((await api(null, 'GET', keys)).body).toMatchObject({ items: [{ id: fresh.key_id }], total: 1 })
      expect((await api(node1, 'GET', `${keys}/${old.key_id}`)).status).toBe(404)
    }, 30_000)

    it('webhook deliveries: the per-endpoint cap holds across nodes, each attempted by one node at a time; kill -9 of the node holding one loses nothing', async () => {
      let hold = true
      let released!: () => void
      const releasedAll = new Promise<void>((resolve) => {
        released = resolve
      })
      const got: { path: string; id: string }[] = []
      const receiver = Bun.serve({
        hostname: '127.0.0.1',
        port: 0,
        async fetch(req) {
          const path = new URL(req.url).pathname
          got.push({ path, id: req.headers.get('service-webhook-id') ?? '' })
          // The first request to /held waits, as a slow receiver, until its node is dead.
          if (path === '/held' && hold) {
            hold = false
            await releasedAll
          }
          return new Response('ok')
        },
      })
      try {
        const capped = await api(null, 'POST', `/v1/workspaces/${ws.id}/webhooks`, {
          url: `http://127.0.0.1:${receiver.port}/capped`,
          events: ['tenant.created'],
        })
        expect(capped.status).toBe(201)
        const batch = await api(
          null,
          'POST',
          `/v1/workspaces/${ws.id}/tenants:batch`,
          Array.from({ length: 45 }, (_, i) => ({ slug: `hook-${i}`, name: `Hook ${i}` })),
        )
        expect(batch.status).toBe(200)
        // 30 a minute per endpoint, whichever node claims: the first 30 arrive, the other 15 wait.
        const capped30 = () => got.filter((g) => g.path === '/capped')
        await until('30 deliveries', () => capped30().length >= 30, 15_000, 20)
        await Bun.sleep(3_000)
        expect(capped30()).toHaveLength(30)
        expect(new Set(capped30().map((g) => g.id)).size).toBe(30)
        const states =
          await sql`SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = ${capped.body.id} GROUP BY status ORDER BY status`
        expect(states.map((r: { status: string; n: number }) => [r.status, r.n])).toEqual([
          ['delivered', 30],
          ['queued', 15],
        ])
        // Waiting, not dropped: each of the 15 has a job due when the minute frees up.
        const [{ n: waiting }] =
          await sql`SELECT count(*)::int AS n FROM jobs WHERE kind = 'webhook.deliver' AND status = 'queued' AND run_at > ${Date.now()}`
        expect(waiting).toBeGreaterThanOrEqual(15)

        // kill -9 of the node whose worker holds a delivery in flight: another node sends it again.
        const held = await api(null, 'POST', `/v1/workspaces/${ws.id}/webhooks`, {
          url: `http://127.0.0.1:${receiver.port}/held`,
          events: ['tenant.deleted'],
        })
        expect(held.status).toBe(201)
        const tenantId = batch.body.results[0].tenant.id
        expect((await api(null, 'DELETE', `/v1/workspaces/${ws.id}/tenants/${tenantId}`)).status).toBe(200)
        await until('the held delivery to arrive', () => got.some((g) => g.path === '/held'), 10_000, 20)
        const [job] =
          await sql`SELECT id, locked_by FROM jobs WHERE kind = 'webhook.deliver' AND status = 'running' AND payload LIKE '%dlv_%'`
        const victim = cluster.nodes.find((n) => String(job.locked_by).startsWith(`${n.nodeId}:`))!
        await victim.kill()
        released()
        await until(
          'the held delivery to be delivered by another node',
          async () =>
            (await sql`SELECT status FROM webhook_deliveries WHERE webhook_id = ${held.body.id}`)[0]
              ?.status === 'delivered',
          20_000,
          50,
        )
        const heldGot = got.filter((g) => g.path === '/held')
        expect(heldGot).toHaveLength(2)
        expect(heldGot[0]!.id).toBe(heldGot[1]!.id)
        const [after] = await sql`SELECT locked_by, attempts FROM jobs WHERE id = ${job.id}`
        expect(String(after.locked_by).startsWith(`${victim.nodeId}:`)).toBe(false)
        await victim.restart()
      } finally {
        receiver.stop(true)
      }
    }, 60_000)

    it("an IdP added on node 1 is on nodes 2 and 3's sign-in pages at once; a federated sign-in alternating between nodes completes", async () => {
      // Workspace B signs its users in through workspace A (the one above) as an oidc IdP.
      const createdB = await api(null, 'POST', '/v1/workspaces', { name: 'Federated' })
      expect(createdB.status).toBe(201)
      const b = createdB.body.id as string
      await until(
        'workspace B to be active',
        async () => (await api(null, 'GET', `/v1/workspaces/${b}`)).body.state === 'active',
      )
      expect(
        (await api(null, 'PATCH', `/v1/workspaces/${b}/login-policy`, { require_email_verification: false }))
          .status,
      ).toBe(200)
      const appOfB = await api(node3, 'POST', `/v1/workspaces/${b}/apps`, {
        name: 'B app',
        app_type: 'web',
        redirect_uris: [`${RP}/cb`],
      })
      expect(appOfB.status).toBe(201)
      const authB = `${cluster.baseUrl}/i/${b}`
      const configB = await oidc.discovery(
        new URL(authB),
        appOfB.body.client_id,
        appOfB.body.client_secret,
        oidc.ClientSecretBasic(appOfB.body.client_secret),
        { execute: [oidc.allowInsecureRequests] },
      )
      // A's client for B, registered with B's redirect URI.
      const appOfA = await api(node2, 'POST', `/v1/workspaces/${ws.id}/apps`, {
        name: 'Federated B',
        app_type: 'web',
        // This cluster is on http://127.0.0.1: an app may name it in dev mode.
        dev_mode: true,
        redirect_uris: [`${authB}/broker/callback`],
      })
      expect(appOfA.status).toBe(201)

      // A sign-in page of B open on nodes 2 and 3: no IdP yet.
      const verifier = oidc.randomPKCECodeVerifier()
      const authorize = oidc.buildAuthorizationUrl(configB, {
        redirect_uri: `${RP}/cb`,
        scope: 'openid email',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      }).href
      const pages = await Promise.all(
        [node2, node3].map(async (n) => {
          const res = await n.fetch(authorize, { redirect: 'manual' })
          const cookie = res.headers
            .getSetCookie()
            .map((c) => c.split(';')[0])
            .join('; ')
          const at = new URL(res.headers.get('location') ?? '', authorize).href
          const html = async () => (await n.fetch(at, { headers: { cookie }, redirect: 'manual' })).text()
          expect(await html()).not.toContain('Continue with')
          return { n, html }
        }),
      )
      const idp = await api(node1, 'POST', `/v1/workspaces/${b}/idps`, {
        type: 'oidc',
        name: 'Analytical SSO',
        issuer: ws.auth_url,
        client_id: appOfA.body.client_id,
        client_secret: appOfA.body.client_secret,
      })
      expect(idp.status).toBe(201)
      expect(idp.body.redirect_uri).toBe(`${authB}/broker/callback`)
      const answeredAt = performance.now()
      await Promise.all(
        pages.map(({ n, html }) =>
          until(
            `node ${n.index} to show the IdP`,
            async () => (await html()).includes('Continue with <span>Analytical SSO</span>'),
            5_000,
            5,
          ),
        ),
      )
      const latency = performance.now() - answeredAt
      console.log(
        `cluster: an IdP added on node 1 was on nodes 2 and 3's sign-in pages after ${latency.toFixed(0)} ms`,
      )
      expect(latency).toBeLessThan(1000)

      // The federated sign-in, every request through the proxy: B's page, A's page, back to B, the app.
      const agent = new Agent(cluster.baseUrl)
      const from = cluster.proxy.served.length
      const signIn = await agent.follow(authorize, {}, (u) => u.href.startsWith(RP))
      const html = await signIn.res.text()
      const start = /<a href="([^"]+)" data-idp=/.exec(html)?.[1]
      expect(start).toBeDefined()
      const atA = await agent.follow(new URL(start!.replace(/&amp;/g, '&'), signIn.url))
      expect(atA.url.pathname.startsWith(`/i/${ws.id}/interaction/`)).toBe(true)
      const back = await agent.submit(
        await atA.res.text(),
        atA.url,
        '/login',
        { email: 'charles@example.com', password: 'babbage-engine-1822' },
        (u) => u.href.startsWith(RP),
      )
      expect(back.url.href.startsWith(`${RP}/cb?`)).toBe(true)
      expect(new Set(cluster.proxy.served.slice(from)).size).toBe(3)
      const tokens = await oidc.authorizationCodeGrant(configB, back.url, {
        pkceCodeVerifier: verifier,
        expectedState: oidc.skipStateCheck,
        idTokenExpected: true,
      })
      expect(tokens.claims()!.iss).toBe(authB)
      const users = await api(node1, 'GET', `/v1/workspaces/${b}/users`)
      expect(users.body.items).toEqual([
        expect.objectContaining({
          id: tokens.claims()!.sub,
          email: 'charles@example.com',
          via_idp: 'Analytical SSO',
        }),
      ])
    }, 60_000)

    it('an SMTP server set through node 1 is what the next mail of nodes 2 and 3 goes through, at once', async () => {
      const smtp = await startSmtpServer()
      try {
        const put = await api(node1, 'PUT', `/v1/workspaces/${ws.id}/smtp`, {
          host: '127.0.0.1',
          port: smtp.port,
          security: 'none',
          from_address: 'engine@analytical.test',
          from_name: 'Analytical',
        })
        expect(put.status).toBe(200)
        // No node keeps the provider in memory: each mail job reads the one in effect when it sends.
        for (const n of [node2, node3]) {
          const email = `cluster-smtp-${n.index}-${crypto.randomUUID()}@example.com`
          const invited = await api(n, 'POST', `/v1/workspaces/${ws.id}/users/invite`, { email })
          expect(invited.status).toBe(201)
          const mail = await smtp.waitFor((m) => JSON.stringify(m.to).includes(email), 15_000)
          expect(mail.from?.value).toEqual([{ address: 'engine@analytical.test', name: 'Analytical' }])
        }
        for (const n of [node2, node3])
          expect((await api(n, 'GET', `/v1/workspaces/${ws.id}/smtp`)).body).toMatchObject({
            provider: 'custom',
            port: smtp.port,
          })
        expect((await api(node3, 'DELETE', `/v1/workspaces/${ws.id}/smtp`)).body.provider).toBe('platform')
        expect((await api(node1, 'GET', `/v1/workspaces/${ws.id}/smtp`)).body.provider).toBe('platform')
      } finally {
        await smtp.close()
      }
    }, 60_000)

    it('the same Stripe event delivered to the three nodes at once is applied once', async () => {
      const now = Math.floor(Date.now() / 1000)
      const subscription = {
        id: 'sub_cluster',
        object: 'subscription',
        created: now,
        customer: 'cus_cluster',
        status: 'active',
        cancel_at_period_end: false,
        ended_at: null,
        metadata: { workspace_id: ws.id },
        schedule: null,
        items: {
          object: 'list',
          data: [
            {
              id: 'si_cluster',
              object: 'subscription_item',
              price: { id: PRICES.pro, object: 'price' },
              quantity: 1,
              current_period_start: now,
              current_period_end: now + 30 * 86_400,
            },
          ],
        },
      }
      const event = stripe.event('customer.subscription.created', subscription)
      const answers = await Promise.all(
        cluster.nodes.map((n) => stripe.post(event, { to: `${n.url}/v1/webhooks/payments` })),
      )
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200])
      expect(answers.map((a) => a.body.duplicate).sort()).toEqual([false, true, true])
      const changed =
        await sql`SELECT data FROM events WHERE workspace_id = ${ws.id} AND type = 'plan.changed'`
      expect(changed).toHaveLength(1)
      expect((await api(node3, 'GET', `/v1/workspaces/${ws.id}/billing`)).body).toMatchObject({
        plan: 'pro',
        status: 'active',
      })
    }, 30_000)

    it("a branding change through node 1 is what nodes 2 and 3's hosted sign-in pages show at once, the logo included", async () => {
      // A sign-in page open on nodes 2 and 3, drawn with the platform's look (each node holds the instance).
      const pages = await signInPagesOnNodes2And3('Difference Engine')
      for (const { get } of pages) expect(await (await get()).text()).not.toContain('class="brand"')
      const patched = await api(node1, 'PATCH', `/v1/workspaces/${ws.id}/branding`, {
        display_name: 'Babbage & Lovelace',
        primary_color: '#7a1f5c',
      })
      expect(patched.status).toBe(200)
      const logo = new FormData()
      logo.append('logo', new File([solidPng(4, 4, [122, 31, 92])], 'logo.png'))
      const uploaded = await node1.fetch(`/v1/workspaces/${ws.id}/branding/logo`, {
        method: 'POST',
        headers: { accept: 'application/json', authorization: `Bearer ${owner.bearer}` },
        body: logo,
      })
      expect(uploaded.status).toBe(200)
      const { logo_url } = (await uploaded.json()) as { logo_url: string }
      const answeredAt = performance.now()
      await Promise.all(
        pages.map(({ n, get }) =>
          until(
            `node ${n.index} to draw the brand`,
            async () => {
              const html = await (await get()).text()
              return (
                html.includes('<p>Babbage &amp; Lovelace</p>') &&
                html.includes('--brand-primary:#7a1f5c') &&
                html.includes(`src="${logo_url}"`)
              )
            },
            5_000,
            5,
          ),
        ),
      )
      const latency = performance.now() - answeredAt
      console.log(
        `cluster: a branding change on node 1 showed on nodes 2 and 3 after ${latency.toFixed(0)} ms`,
      )
      expect(latency).toBeLessThan(1000)
      // Each node serves the logo from the store, byte for byte.
      for (const n of [node2, node3]) {
        const res = await n.fetch(logo_url)
        expect(res.status).toBe(200)
        expect(res.headers.get('content-type')).toBe('image/png')
        expect(new Uint8Array(await res.arrayBuffer())).toEqual(solidPng(4, 4, [122, 31, 92]))
      }
    }, 30_000)

    it('deleting the workspace on node 1 makes its discovery 404 on nodes 2 and 3 within one second', async () => {
      const discovery = (n: ClusterNode) => n.fetch(`${ws.auth_url}/.well-known/openid-configuration`)
      // Nodes 2 and 3 hold the instance as serving and its discovery in their caches (a second read is a hit).
      for (const n of [node2, node3]) {
        expect((await discovery(n)).status).toBe(200)
        expect((await discovery(n)).status).toBe(200)
      }
      const sentAt = performance.now()
      const deleted = await api(node1, 'DELETE', `/v1/workspaces/${ws.id}`, { confirm: 'Analytical' })
      const answeredAt = performance.now()
      expect(deleted.status).toBe(202)
      const goneAt = await Promise.all(
        [node2, node3].map(async (n) => {
          await until(
            `discovery to 404 on node ${n.index}`,
            async () => (await discovery(n)).status === 404,
            5_000,
            5,
          )
          return performance.now()
        }),
      )
      const latency = Math.max(...goneAt) - answeredAt
      console.log(
        `cluster: workspace deletion on node 1 seen on nodes 2 and 3 after ${latency.toFixed(0)} ms ` +
          `(${(Math.max(...goneAt) - sentAt).toFixed(0)} ms from the DELETE sent)`,
      )
      expect(latency).toBeLessThan(1000)
    }, 30_000)

    it(`runs ${JOBS} jobs enqueued across the nodes exactly once each, spread over the nodes`, async () => {
      const startedAt = performance.now()
      // Ten rounds, each node enqueueing a share through its own core (which wakes its own workers).
      const batches: Promise<string[]>[] = []
      for (let round = 0; round < 10; round++) {
        for (const [i, n] of cluster.nodes.entries()) {
          const share = Math.floor(JOBS / 30) + (round * 3 + i < JOBS % 30 ? 1 : 0)
          batches.push(n.enqueue('test.journal', { ms: 0 }, share))
        }
        await Bun.sleep(20)
      }
      const ids = (await Promise.all(batches)).flat()
      const enqueuedMs = performance.now() - startedAt
      expect(new Set(ids).size).toBe(JOBS)
      await until('every job to be done', async () => (await countDone(ids)) === JOBS, 30_000, 20)
      const tookMs = performance.now() - startedAt

      const rows = await sql`SELECT id, status, attempts, locked_by FROM jobs WHERE id IN ${sql(ids)}`
      expect(rows).toHaveLength(JOBS)
      const byNode = new Map<string, number>()
      for (const r of rows) {
        expect({ id: r.id, status: r.status, attempts: r.attempts }).toEqual({
          id: r.id,
          status: 'done',
          attempts: 1,
        })
        const node = String(r.locked_by).split(':')[0]!
        byNode.set(node, (byNode.get(node) ?? 0) + 1)
      }
      expect(byNode.size).toBeGreaterThan(1)

      // Counted where they ran: each id started once and finished once, across all journals.
      const mine = new Set(ids)
      const lines = journalLines().filter((l) => mine.has(l.id))
      const starts = new Map<string, number>()
      const dones = new Map<string, number>()
      for (const l of lines) {
        const tally = l.what === 'start' ? starts : dones
        tally.set(l.id, (tally.get(l.id) ?? 0) + 1)
      }
      expect(starts.size).toBe(JOBS)
      expect(dones.size).toBe(JOBS)
      expect([...starts.values(), ...dones.values()].every((n) => n === 1)).toBe(true)

      const spread = [...byNode.entries()]
        .sort()
        .map(([n, c]) => `${n} ${c}`)
        .join(', ')
      console.log(
        `cluster: ${JOBS} jobs enqueued on 3 nodes (over ${enqueuedMs.toFixed(0)} ms) ran once each, all done ` +
          `${tookMs.toFixed(0)} ms after the first enqueue: ${((JOBS * 1000) / tookMs).toFixed(0)} jobs/s (${spread})`,
      )
    }, 60_000)

    it('kill -9 of a node holding jobs: other nodes finish them once each, nothing is lost, and the node comes back', async () => {
      // One transaction: node 3 wakes once with all six due and claims them side by side.
      const all = await node3.enqueueBatch([
        { kind: 'test.journal', payload: { ms: 3000 } },
        ...Array.from({ length: 5 }, () => ({ kind: 'test.journal', payload: { ms: 2500 } })),
      ])
      const slow = all[0]!
      await until(
        'the slow job to start',
        () => journalLines().some((l) => l.id === slow && l.what === 'start'),
        10_000,
        5,
      )
      const victim = cluster.nodes.find((n) => n.journal().includes(`start ${slow} 1`))!
      const held =
        await sql`SELECT id FROM jobs WHERE status = 'running' AND locked_by LIKE ${`${victim.nodeId}:%`} AND id IN ${sql(all)}`
      const heldIds = held.map((r: { id: string }) => r.id)
      expect(heldIds).toContain(slow)
      // A claim reaches its worker thread a moment later: kill the node once it runs every job it holds.
      await until(
        'the held jobs to start',
        () => heldIds.every((id: string) => victim.journal().includes(`start ${id} 1`)),
        10_000,
        5,
      )

      await victim.kill()
      const killedAt = performance.now()
      for (const id of heldIds) expect(victim.journal()).not.toContain(`done ${id}`)

      await until('every job to be done', async () => (await countDone(all)) === all.length, 20_000, 50)
      const tookMs = performance.now() - killedAt
      console.log(
        `cluster: the ${heldIds.length} jobs node ${victim.index} held at kill -9 finished on other nodes ` +
          `${tookMs.toFixed(0)} ms later (lease 2 s)`,
      )

      // Every job the victim held: started there, finished once elsewhere on its second attempt.
      const lines = journalLines()
      const rows = await sql`SELECT id, locked_by, attempts FROM jobs WHERE id IN ${sql(heldIds)}`
      for (const r of rows) {
        const finisher = String(r.locked_by).split(':')[0]
        expect(finisher).not.toBe(victim.nodeId)
        expect(r.attempts).toBe(2)
        expect(lines.filter((l) => l.id === r.id && l.what === 'done')).toEqual([
          {
            node: cluster.nodes.find((n) => n.nodeId === finisher)!.index,
            what: 'done',
            id: r.id,
            attempt: 2,
          },
        ])
        expect(lines).toContainEqual({ node: victim.index, what: 'start', id: r.id, attempt: 1 })
      }
      // Nothing lost, nothing run twice to completion.
      for (const id of all) expect(lines.filter((l) => l.id === id && l.what === 'done')).toHaveLength(1)

      // The killed node restarts with the same NODE_ID and DATA_DIR, and serves again.
      await victim.restart()
      expect((await victim.fetch('/healthz')).status).toBe(200)
      expect(await api(victim, 'GET', '/v1/auth/me')).toMatchObject({
        status: 200,
        body: { email: 'ada@example.com' },
      })
      // Through the proxy too: three requests in a row reach every node.
      for (let i = 0; i < 3; i++) expect((await api(null, 'GET', '/v1/auth/me')).status).toBe(200)
      // Its job workers run again, and nothing of its earlier boot ran a second time.
      const [after] = await victim.enqueueBatch([{ kind: 'test.journal', payload: { ms: 0 } }])
      await until(
        'a job enqueued on the restarted node to be done',
        async () => (await countDone([after!])) === 1,
        10_000,
      )
      for (const id of all)
        expect(journalLines().filter((l) => l.id === id && l.what === 'done')).toHaveLength(1)
    }, 60_000)
  },
)
