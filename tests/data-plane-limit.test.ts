import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import { eq } from 'drizzle-orm'
import { createSession, sessionCookieName } from '../src/features/auth/sessions'
import { workspaceMembers, workspaces } from '../src/features/workspaces/schema'
import { issuerFor, PLATFORM, signUp } from '../src/identity'
import { MEMO_MS, REFRESH_AHEAD_MS } from '../src/identity/instances'
import { ManualClock } from '../src/shared/clock'
import { activeWorkspace, clientCredentials, registerApp } from './support/instances'
import { startTestServer, type TestServer } from './support/server'

// Issue 26, item 4, the data plane (SPEC "Limits"): 50 requests per second and a burst of 200 per
// identity instance, discovery and JWKS exempt, one instance's flood leaving another untouched. The
// server's clock stands still while the burst is sent, so the bucket does not refill meanwhile.
const clock = new ManualClock(Date.now())
let server: TestServer

beforeAll(async () => {
  server = await startTestServer(
    { RATE_LIMIT_DATA_PLANE_RPS: '50', RATE_LIMIT_DATA_PLANE_BURST: '200' },
    undefined,
    {
      clock,
    },
  )
})
afterAll(() => server.stop())
beforeEach(() => clock.advance(60_000))

async function instanceWithClient() {
  const ws = await activeWorkspace(server.core)
  const app = await registerApp(server.core, ws, { type: 'web', redirectUris: ['https://rp.example.com/cb'] })
  const issuer = issuerFor(server.core.config, ws)
  const token = () => clientCredentials(issuer, app.clientId, app.clientSecret!)
  return { ws, issuer, token }
}

describe('the data plane', () => {
  it('serves a burst of 200 token requests of 250 at once and refuses the rest with 429 and Retry-After', async () => {
    const one = await instanceWithClient()
    const other = await instanceWithClient()
    const answers = await Promise.all(Array.from({ length: 250 }, () => one.token()))
    const statuses = answers.map((r) => r.status)
    expect(statuses.filter((s) => s === 200).length).toBe(200)
    expect(statuses.filter((s) => s === 429).length).toBe(50)
    const refused = answers.find((r) => r.status === 429)!
    expect(refused.headers.get('retry-after')).toBe('1')
    expect(await refused.json()).toEqual({
      error: 'temporarily_unavailable',
      error_description: 'Rate limit reached: 50 requests per second for this instance. Retry in 1 s.',
    })

    // Discovery and JWKS are exempt; another instance has its own bucket.
    expect((await fetch(`${one.issuer}/.well-known/openid-configuration`)).status).toBe(200)
    expect((await fetch(`${one.issuer}/jwks`)).status).toBe(200)
    expect((await other.token()).status).toBe(200)

    // A second later, 50 more fit, and the 51st does not.
    clock.advance(1000)
    const next = await Promise.all(Array.from({ length: 51 }, () => one.token()))
    expect(next.filter((r) => r.status === 200).length).toBe(50)
    expect(next.filter((r) => r.status === 429).length).toBe(1)
  })

  it('answers a browser a page, not JSON', async () => {
    const one = await instanceWithClient()
    await Promise.all(Array.from({ length: 200 }, () => one.token()))
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
    // 100/s with a burst of 400: 450 at once, 400 served.
    const statuses = (await Promise.all(Array.from({ length: 450 }, () => one.token()))).map((r) => r.status)
    expect(statuses.filter((s) => s === 200).length).toBe(400)
    expect(statuses.filter((s) => s === 429).length).toBe(50)

    // Back to the default: the next second brings 50, not 100.
    expect((await patch({ data_plane_rps: null })).status).toBe(200)
    clock.advance(1000)
    const next = (await Promise.all(Array.from({ length: 60 }, () => one.token()))).map((r) => r.status)
    expect(next.filter((s) => s === 200).length).toBe(50)
  })

  it('follows a rate changed by hand (not through the API) within MEMO_MS, not reading it again before the memo’s last REFRESH_AHEAD_MS', async () => {
    const one = await instanceWithClient()
    const served = async (n: number) =>
      (await Promise.all(Array.from({ length: n }, () => one.token()))).filter((r) => r.status === 200).length
    expect(await served(1)).toBe(1)
    // Changed in the database by hand: no node is told.
    await server.core.db
      .update(workspaces)
      .set({ plan: 'pro', dataPlaneRps: 100 })
      .where(eq(workspaces.id, one.ws))
    // Within the memo, before its last REFRESH_AHEAD_MS, the rate read first holds: a burst of 200.
    clock.advance(MEMO_MS - REFRESH_AHEAD_MS - 1000)
    expect(await served(250)).toBe(200)
    // Then a request reads it again behind its answer; a minute on, the bucket is the new one's, 400.
    clock.advance(2000)
    expect(await served(1)).toBe(1)
    // That read may still be on its way (PostgreSQL): the burst below waits for it, as the requests
    // during it would go on with the rate they had (each of those costs the old rate's interval).
    await server.identity.pool.readState(one.ws)
    clock.advance(60_000)
    expect(await served(450)).toBe(400)
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
    const statuses = (await Promise.all(Array.from({ length: 250 }, () => one.token()))).map((r) => r.status)
    expect(statuses.filter((s) => s === 200).length).toBe(200)
  })
})
