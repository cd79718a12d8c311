import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import { eq } from 'drizzle-orm'
import { createSession, sessionCookieName } from '../src/features/auth/sessions'
import { workspaceMembers, workspaces } from '../src/features/workspaces/schema'
import { issuerFor, PLATFORM, signUp } from '../src/identity'
import { MEMO_MS, REFRESH_AHEAD_MS } from '../src/identity/instances'
import { ManualClock } from '../src/shared/clock'
import { Agent } from './support/browserless'
import { activeWorkspace, clientCredentials, registerApp } from './support/instances'
import { startTestServer, type TestServer } from './support/server'
import { authorizeUrl, openSignInForm } from './support/sign-in'

// Issue 26, item 4, the data plane (SPEC "Limits"): 50 requests per second and a burst of 200 per
// identity instance, discovery and JWKS exempt, one instance's flood leaving another untouched. The
// server's clock stands still while the burst is sent, so the bucket does not refill meanwhile.
// Issue 56, item 3 (DESIGN "Data plane fairness"): within that budget one client address takes at
// most a quarter (12.5/s, burst 50), and a quarter of the burst (50) is kept for the hosted pages
// of a browser: token calls take at most 150 at once. The test client is a trusted proxy here, so
// `X-Forwarded-For` names each request's client; a request without it comes from the proxy itself
// (127.0.0.1), the browser of these tests.
const clock = new ManualClock(Date.now())
let server: TestServer

beforeAll(async () => {
  server = await startTestServer(
    { RATE_LIMIT_DATA_PLANE_RPS: '50', RATE_LIMIT_DATA_PLANE_BURST: '200', TRUSTED_PROXIES: '127.0.0.1/32' },
    undefined,
    {
      clock,
    },
  )
})
afterAll(() => server.stop())
beforeEach(() => clock.advance(60_000))

const REDIRECT_URI = 'https://rp.example.com/cb'
/** Ten clients, each sent a tenth of a burst: no one of them reaches its own share below. */
const CLIENTS = Array.from({ length: 10 }, (_, i) => `198.51.100.${i + 1}`)
const FLOODER = '192.0.2.66'
const from = (address: string) => ({ 'x-forwarded-for': address })

async function instanceWithClient() {
  const ws = await activeWorkspace(server.core)
  const app = await registerApp(server.core, ws, { type: 'web', redirectUris: [REDIRECT_URI] })
  const issuer = issuerFor(server.core.config, ws)
  /** A token request from `address` (a client of CLIENTS in turn by default). */
  let turn = 0
  const token = (address = CLIENTS[turn++ % CLIENTS.length]!) =>
    clientCredentials(issuer, app.clientId, app.clientSecret!, from(address))
  return { ws, issuer, token, clientId: app.clientId }
}

/** `n` requests at once (`send(i)` sends the i-th); their statuses. */
const burst = async (n: number, send: (i: number) => Promise<Response>) =>
  (await Promise.all(Array.from({ length: n }, (_, i) => send(i)))).map((r) => r.status)
const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length

/** A burst's answers: `served` of them 200, the rest 429 with a Retry-After of 1 s and `description`. */
async function expectServed(answers: Response[], served: number, description: string) {
  const statuses = answers.map((r) => r.status)
  expect(count(statuses, 200)).toBe(served)
  expect(count(statuses, 429)).toBe(answers.length - served)
  const refused = answers.find((r) => r.status === 429)!
  expect(refused.headers.get('retry-after')).toBe('1')
  expect(await refused.json()).toEqual({ error: 'temporarily_unavailable', error_description: description })
}

describe('the data plane', () => {
  it('serves 150 token requests of 250 at once (the burst of 200 less the pages’ 50) and refuses the rest with 429 and Retry-After', async () => {
    const one = await instanceWithClient()
    const other = await instanceWithClient()
    const answers = await Promise.all(Array.from({ length: 250 }, () => one.token()))
    await expectServed(
      answers,
      150,
      'Rate limit reached: 50 requests per second for this instance. Retry in 1 s.',
    )

    // Discovery and JWKS are exempt; another instance has its own bucket.
    expect((await fetch(`${one.issuer}/.well-known/openid-configuration`)).status).toBe(200)
    expect((await fetch(`${one.issuer}/jwks`)).status).toBe(200)
    expect((await other.token()).status).toBe(200)

    // A second later, 50 more fit, and the 51st does not.
    clock.advance(1000)
    const next = await burst(51, () => one.token())
    expect(count(next, 200)).toBe(50)
    expect(count(next, 429)).toBe(1)
  })

  it('answers a browser a page, not JSON', async () => {
    const one = await instanceWithClient()
    // Pages may take the whole burst (the reserve is theirs, and what token calls leave).
    const pages = await burst(200, (i) =>
      fetch(`${one.issuer}/auth?client_id=x`, { headers: from(CLIENTS[i % CLIENTS.length]!) }),
    )
    expect(count(pages, 429)).toBe(0)
    const page = await fetch(`${one.issuer}/auth?client_id=x`, { headers: { accept: 'text/html' } })
    expect(page.status).toBe(429)
    expect(page.headers.get('content-type')).toContain('text/html')
    expect(await page.text()).toContain('Too many requests')
  })

  it("takes a Pro workspace's own rate (its burst scaled alike) at once, and refuses it on Free with 422", async () => {
    const one = await instanceWithClient()
    const account = await signUp(server.core, PLATFORM, {
      email: `o-${crypto.randomUUID()}@example.com`,
      password: 'a long password 1',
    })
    await server.core.db.insert(workspaceMembers).values({
      workspaceId: one.ws,
      accountId: account.id,
      role: 'owner',
      createdAt: clock.now(),
      updatedAt: clock.now(),
    })
    const { cookie, csrfToken } = await createSession(server.core, account.id, null)
    const patch = (body: unknown) =>
      fetch(`${server.baseUrl}/v1/workspaces/${one.ws}`, {
        method: 'PATCH',
        headers: {
          cookie: `${sessionCookieName(server.core)}=${cookie}`,
          'x-csrf-token': csrfToken,
          'content-type': 'application/json',
        },
        body: JSON.stringify(body),
      })
    const free = await patch({ data_plane_rps: 100 })
    expect(free.status).toBe(422)
    expect(((await free.json()) as { detail: { loc: string[] }[] }).detail[0]!.loc).toEqual([
      'body',
      'data_plane_rps',
    ])

    await server.core.db.update(workspaces).set({ plan: 'pro' }).where(eq(workspaces.id, one.ws))
    const pro = await patch({ data_plane_rps: 100 })
    expect(pro.status).toBe(200)
    expect(((await pro.json()) as { data_plane_rps: number }).data_plane_rps).toBe(100)
    // 100/s with a burst of 400, the pages' quarter of it kept: 450 at once, 300 served.
    const statuses = await burst(450, () => one.token())
    expect(count(statuses, 200)).toBe(300)
    expect(count(statuses, 429)).toBe(150)

    // Back to the default: the next second brings 50, not 100.
    expect((await patch({ data_plane_rps: null })).status).toBe(200)
    clock.advance(1000)
    expect(count(await burst(60, () => one.token()), 200)).toBe(50)
  })

  it('follows a rate changed by hand (not through the API) within MEMO_MS, not reading it again before the memo’s last REFRESH_AHEAD_MS', async () => {
    const one = await instanceWithClient()
    const served = async (n: number) => count(await burst(n, () => one.token()), 200)
    expect(await served(1)).toBe(1)
    // Changed in the database by hand: no node is told.
    await server.core.db
      .update(workspaces)
      .set({ plan: 'pro', dataPlaneRps: 100 })
      .where(eq(workspaces.id, one.ws))
    // Within the memo, before its last REFRESH_AHEAD_MS, the rate read first holds: a burst of 200,
    // 150 of it for token calls.
    clock.advance(MEMO_MS - REFRESH_AHEAD_MS - 1000)
    expect(await served(250)).toBe(150)
    // Then a request reads it again behind its answer; a minute on, the bucket is the new one's, 400
    // (300 for token calls).
    clock.advance(2000)
    expect(await served(1)).toBe(1)
    // That read may still be on its way (PostgreSQL): the burst below waits for it, as the requests
    // during it would go on with the rate they had (each of those costs the old rate's interval).
    await server.identity.pool.readState(one.ws)
    clock.advance(60_000)
    expect(await served(450)).toBe(300)
  })

  it('is a plan setting: a developer gets 403, and a workspace back on Free has the default whatever it set', async () => {
    const one = await instanceWithClient()
    const member = async (role: 'owner' | 'developer') => {
      const account = await signUp(server.core, PLATFORM, {
        email: `${role}-${crypto.randomUUID()}@example.com`,
        password: 'a long password 1',
      })
      const now = clock.now()
      await server.core.db
        .insert(workspaceMembers)
        .values({ workspaceId: one.ws, accountId: account.id, role, createdAt: now, updatedAt: now })
      const { cookie, csrfToken } = await createSession(server.core, account.id, null)
      return (body: unknown) =>
        fetch(`${server.baseUrl}/v1/workspaces/${one.ws}`, {
          method: 'PATCH',
          headers: {
            cookie: `${sessionCookieName(server.core)}=${cookie}`,
            'x-csrf-token': csrfToken,
            'content-type': 'application/json',
          },
          body: JSON.stringify(body),
        })
    }
    await server.core.db.update(workspaces).set({ plan: 'pro' }).where(eq(workspaces.id, one.ws))
    const developer = await member('developer')
    expect((await developer({ data_plane_rps: 100 })).status).toBe(403)
    expect((await developer({ name: 'Renamed' })).status).toBe(200)
    expect((await (await member('owner'))({ data_plane_rps: 100 })).status).toBe(200)

    await server.core.db.update(workspaces).set({ plan: 'free' }).where(eq(workspaces.id, one.ws))
    await server.core.instances.changed(one.ws)
    expect(count(await burst(250, () => one.token()), 200)).toBe(150)
  })
})

describe('fairness within an instance', () => {
  /** A browser's page load of a sign-in at `ws`: the authorization request, then the hosted page. */
  const pageLoad = async (ws: string, clientId: string) => {
    const page = await new Agent(server.baseUrl).follow(
      await authorizeUrl(server, ws, clientId, REDIRECT_URI),
    )
    return { status: page.res.status, html: await page.res.text() }
  }

  it('refuses one address past its quarter while another address and a browser are served', async () => {
    const one = await instanceWithClient()
    const flood = await Promise.all(Array.from({ length: 300 }, () => one.token(FLOODER)))
    await expectServed(
      flood,
      50,
      'Rate limit reached: 12.5 requests per second from one client address for this instance. Retry in 1 s.',
    )

    // The flood's refusals took nothing of the instance: another address has its whole share.
    expect(await burst(50, () => one.token('203.0.113.9'))).toEqual(new Array(50).fill(200))
    expect((await one.token('203.0.113.9')).status).toBe(429)
    const page = await pageLoad(one.ws, one.clientId)
    expect(page.status).toBe(200)
    expect(page.html).toContain('<h1>Sign in</h1>')
  })

  it('keeps the hosted pages their reserve when token calls from many addresses take the rest', async () => {
    const one = await instanceWithClient()
    const account = { email: 'reserve@example.com', password: 'a long password 1' }
    await signUp(server.core, one.ws, account)
    // 40 from each of ten addresses, each under its share: the token calls' 150 go, the rest is refused.
    const flood = await burst(400, () => one.token())
    expect(count(flood, 200)).toBe(150)
    expect(count(flood, 429)).toBe(250)
    expect((await one.token('203.0.113.10')).status).toBe(429)

    const loads = await Promise.all(Array.from({ length: 10 }, () => pageLoad(one.ws, one.clientId)))
    console.log(
      `data plane: ${loads.filter((l) => l.status === 200).length} of 10 page loads answered ` +
        'after a token flood of 400 from 10 addresses',
    )
    expect(loads.map((l) => l.status)).toEqual(new Array(10).fill(200))
    // The sign-in goes through: its form's answer is the redirect back to the authorization.
    const { post } = await openSignInForm(server, one.ws, one.clientId, REDIRECT_URI)
    const signedIn = await post(account.email, account.password)
    expect(signedIn.status).toBe(303)
  })

  it("keeps the dashboard's sign-in page open while one address floods the platform's token endpoint", async () => {
    const platformToken = (address: string) =>
      fetch(`${server.baseUrl}/i/platform/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...from(address) },
        body: 'grant_type=client_credentials&client_id=nobody',
      })
    const flood = await burst(300, () => platformToken(FLOODER))
    expect(count(flood, 401)).toBe(50)
    expect(count(flood, 429)).toBe(250)
    // Another address is answered by the token endpoint itself (no such client), not refused.
    const other = await platformToken('203.0.113.9')
    expect(other.status).toBe(401)
    expect(await other.json()).toMatchObject({ error: 'invalid_client' })

    const page = await new Agent(server.baseUrl).follow('/v1/auth/login')
    expect(page.res.status).toBe(200)
    expect(await page.res.text()).toContain('<h1>Sign in</h1>')
  })
})
