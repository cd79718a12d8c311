import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import { createSession, sessionCookieName } from '../src/features/auth/sessions'
import { PLATFORM, signUp } from '../src/identity'
import { ManualClock } from '../src/shared/clock'
import { settled, sharedBrowser } from './support/browser'
import { activeWorkspace } from './support/instances'
import { startTestServer, type TestServer } from './support/server'

// Issue 26, item 4: the control plane's rate limits (SPEC "Limits", DESIGN "Rate limits") on the
// server's ManualClock: 60 per minute per workspace, 600 per organisation (all of an owner's
// workspaces), unauthenticated /v1/auth/* and failed credentials per client address; the
// X-RateLimit-* headers on every /v1 answer and on none of the exempt routes.
const SECOND = 1000
const MINUTE = 60 * SECOND
const clock = new ManualClock(Date.now())
let server: TestServer

beforeAll(async () => {
  server = await startTestServer(
    {
      RATE_LIMIT_WORKSPACE_PER_MINUTE: '60',
      RATE_LIMIT_ORGANISATION_PER_MINUTE: '600',
      RATE_LIMIT_ADDRESS_PER_MINUTE: '20',
    },
    undefined,
    { clock },
  )
})
afterAll(() => server.stop())
// Each test starts a minute after the last one: every bucket is full again.
beforeEach(() => clock.advance(10 * MINUTE))

async function owner() {
  const account = await signUp(server.core, PLATFORM, {
    email: `o-${crypto.randomUUID()}@example.com`,
    password: 'a long password 1',
  })
  const { cookie, csrfToken } = await createSession(server.core, account.id, null)
  const sessionCookie = `${sessionCookieName(server.core)}=${cookie}`
  return {
    id: account.id,
    headers: { cookie: sessionCookie, accept: 'application/json' },
    /** Posts a dashboard form with the session and its CSRF token, as htmx does unless `htmx` is false. */
    form: (path: string, fields: Record<string, string>, htmx = true) =>
      fetch(`${server.baseUrl}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          cookie: sessionCookie,
          'content-type': 'application/x-www-form-urlencoded',
          ...(htmx ? { 'hx-request': 'true' } : {}),
        },
        body: new URLSearchParams({ _csrf: csrfToken, ...fields }),
      }),
  }
}

const get = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${server.baseUrl}${path}`, { headers })
const limitHeaders = (res: Response) => ({
  limit: res.headers.get('x-ratelimit-limit'),
  remaining: res.headers.get('x-ratelimit-remaining'),
  reset: res.headers.get('x-ratelimit-reset'),
})

describe('the control plane', () => {
  it('refuses the 61st call on a workspace within a minute with 429 and Retry-After; the window reopens with time', async () => {
    const me = await owner()
    const ws = await activeWorkspace(server.core, me.id)
    const start = clock.now()
    for (let i = 1; i <= 60; i++) {
      const res = await get(`/v1/workspaces/${ws}`, me.headers)
      expect(res.status).toBe(200)
      expect(limitHeaders(res)).toEqual({
        limit: '60',
        remaining: String(60 - i),
        reset: String(Math.ceil((start + i * SECOND) / 1000)),
      })
    }
    const refused = await get(`/v1/workspaces/${ws}`, me.headers)
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe('1')
    expect(limitHeaders(refused)).toEqual({
      limit: '60',
      remaining: '0',
      reset: String(Math.ceil((start + MINUTE) / 1000)),
    })
    expect(await refused.json()).toEqual({
      detail: 'Rate limit reached: 60 requests per minute per workspace. Retry in 1 s.',
    })
    // Every route of the workspace shares its bucket; another workspace of another owner does not.
    expect((await get(`/v1/workspaces/${ws}/apps`, me.headers)).status).toBe(429)
    const other = await owner()
    expect(
      (await get(`/v1/workspaces/${await activeWorkspace(server.core, other.id)}`, other.headers)).status,
    ).toBe(200)

    clock.advance(SECOND)
    expect((await get(`/v1/workspaces/${ws}`, me.headers)).status).toBe(200)
    expect((await get(`/v1/workspaces/${ws}`, me.headers)).status).toBe(429)
    clock.advance(MINUTE)
    const again = await get(`/v1/workspaces/${ws}`, me.headers)
    expect(again.status).toBe(200)
    expect(again.headers.get('x-ratelimit-remaining')).toBe('59')
  })

  it("refuses an organisation's 601st call in a minute across its 11 workspaces", async () => {
    const me = await owner()
    const workspaces = []
    for (let i = 0; i < 11; i++) workspaces.push(await activeWorkspace(server.core, me.id))
    const statuses: number[] = []
    let refusal: Response | undefined
    for (const ws of workspaces) {
      for (let i = 0; i < 60; i++) {
        const res = await get(`/v1/workspaces/${ws}/apps`, me.headers)
        statuses.push(res.status)
        if (res.status === 429) refusal ??= res
      }
    }
    expect(statuses.slice(0, 600).every((s) => s === 200)).toBe(true)
    expect(statuses.slice(600).every((s) => s === 429)).toBe(true)
    expect(refusal!.headers.get('x-ratelimit-limit')).toBe('600')
    expect(((await refusal!.json()) as { detail: string }).detail).toContain('per organisation')
  })

  it('counts a call one bucket refuses in no other bucket', async () => {
    const me = await owner()
    const spent: string[] = []
    for (let i = 0; i < 10; i++) spent.push(await activeWorkspace(server.core, me.id))
    for (const ws of spent)
      for (let i = 0; i < 60; i++) expect((await get(`/v1/workspaces/${ws}`, me.headers)).status).toBe(200)
    // The organisation is spent: 30 calls on a fresh workspace are refused, and must not count there.
    const fresh = await activeWorkspace(server.core, me.id)
    for (let i = 0; i < 30; i++) expect((await get(`/v1/workspaces/${fresh}`, me.headers)).status).toBe(429)
    // Six seconds later the organisation has 60 again (600/min); the fresh workspace has all its 60.
    clock.advance(6 * SECOND)
    let served = 0
    while ((await get(`/v1/workspaces/${fresh}`, me.headers)).status === 200) served++
    expect(served).toBe(60)
  })

  it('sends the headers on every /v1 answer, refusals included, and none on /healthz, discovery and JWKS', async () => {
    const me = await owner()
    const ws = await activeWorkspace(server.core, me.id)
    const stranger = crypto.randomUUID()
    for (const res of [
      await get('/v1/workspaces', me.headers),
      await get('/v1/auth/me', me.headers),
      await get(`/v1/workspaces/${stranger}`, me.headers), // 404
      await get(`/v1/workspaces/${ws}/users?limit=0`, me.headers), // 422
      await get('/v1/workspaces', { authorization: 'Bearer nope' }), // 401
    ]) {
      expect(res.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/)
      expect(res.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/)
      expect(res.headers.get('x-ratelimit-reset')).toMatch(/^\d{10}$/)
    }
    for (const path of ['/healthz', `/i/${ws}/.well-known/openid-configuration`, `/i/${ws}/jwks`]) {
      const res = await get(path)
      expect(res.status).toBe(200)
      expect(res.headers.get('x-ratelimit-limit')).toBeNull()
    }
  })

  it('counts unauthenticated /v1/auth calls and failed credentials per client address', async () => {
    for (let i = 0; i < 20; i++) {
      expect((await fetch(`${server.baseUrl}/v1/auth/device/start`, { method: 'POST' })).status).toBe(200)
    }
    const refused = await fetch(`${server.baseUrl}/v1/auth/device/start`, { method: 'POST' })
    expect(refused.status).toBe(429)
    expect(((await refused.json()) as { detail: string }).detail).toContain('per client address')
    expect(refused.headers.get('retry-after')).toBe('3')

    clock.advance(10 * MINUTE)
    for (let i = 0; i < 20; i++)
      expect((await get('/v1/workspaces', { authorization: 'Bearer guess' })).status).toBe(401)
    expect((await get('/v1/workspaces', { authorization: 'Bearer guess' })).status).toBe(429)
    // A signed-in caller is counted on their organisation, not on the address.
    const me = await owner()
    expect((await get('/v1/workspaces', me.headers)).status).toBe(200)
  })
})

// Issue 56: the dashboard's forms change what the API changes, so they spend the same buckets (DESIGN
// "Dashboard writes"); its pages and the status poll spend none.
describe('dashboard writes', () => {
  it("count in the workspace's bucket with its /v1 calls; the write past it shows the wait inline", async () => {
    const me = await owner()
    const ws = await activeWorkspace(server.core, me.id)
    for (let i = 0; i < 30; i++) expect((await get(`/v1/workspaces/${ws}`, me.headers)).status).toBe(200)
    const tenants = `/app/workspaces/${ws}/tenants`
    for (let i = 1; i <= 30; i++) {
      const res = await me.form(tenants, { name: `Tenant ${i}`, slug: `tenant-${i}` })
      expect(res.status).toBe(200)
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(30 - i))
    }
    const refused = await me.form(tenants, { name: 'One too many', slug: 'one-too-many' })
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe('1')
    expect(refused.headers.get('x-ratelimit-limit')).toBe('60')
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0')
    expect(refused.headers.get('content-type')).toStartWith('text/html')
    expect(await refused.text()).toContain('Too many changes in a minute — try again in 1 s.')
    // One bucket: the API is refused too, and what was refused created nothing.
    expect((await get(`/v1/workspaces/${ws}`, me.headers)).status).toBe(429)
    const listed = await server.core.store.query<{ n: number }>(
      'SELECT count(*) AS n FROM tenants WHERE workspace_id = $1',
      [ws],
    )
    expect(Number(listed[0]!.n)).toBe(30)
    // Reads spend nothing: the pages and the status poll still answer, with the bucket spent.
    for (const page of [tenants, `/app/workspaces/${ws}`, `/app/partials/workspaces/${ws}/status`]) {
      const res = await get(page, { cookie: me.headers.cookie })
      expect(res.status).toBe(200)
    }

    clock.advance(SECOND)
    expect((await me.form(tenants, { name: 'Later', slug: 'later' })).status).toBe(200)
    expect((await me.form(tenants, { name: 'Too soon', slug: 'too-soon' })).status).toBe(429)
  })

  it('count other writes against the organisation; without htmx the refusal is a page', async () => {
    const me = await owner()
    for (let i = 0; i < 599; i++) expect((await get('/v1/workspaces', me.headers)).status).toBe(200)
    const created = await me.form('/app/workspaces', { name: 'Last one' }, false)
    expect(created.status).toBe(303)
    const refused = await me.form('/app/workspaces', { name: 'One too many' }, false)
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe('1')
    expect(refused.headers.get('x-ratelimit-limit')).toBe('600')
    const page = await refused.text()
    expect(page).toContain('<title>Too many changes · Gatehouse</title>')
    expect(page).toContain('Too many changes in a minute — try again in 1 s.')
    const owned = await server.core.store.query<{ n: number }>(
      'SELECT count(*) AS n FROM workspaces WHERE owner_id = $1',
      [me.id],
    )
    expect(Number(owned[0]!.n)).toBe(1)
  })

  it('show the refusal in the page, where the form was (Chromium)', async () => {
    const me = await owner()
    const ws = await activeWorkspace(server.core, me.id)
    const context = await (await sharedBrowser()).newContext()
    const [name, value] = me.headers.cookie.split('=') as [string, string]
    await context.addCookies([{ name, value, url: server.baseUrl }])
    const page = await context.newPage()
    const errors: string[] = []
    page.on('pageerror', (e) => errors.push(e.message))
    await page.goto(`${server.baseUrl}/app/workspaces/${ws}/tenants`)
    for (let i = 0; i < 60; i++) expect((await get(`/v1/workspaces/${ws}`, me.headers)).status).toBe(200)
    await page.getByLabel('Name').fill('Acme Inc.')
    await page.getByLabel(/^Slug/).fill('acme')
    await page.getByRole('button', { name: 'Create tenant' }).click()
    await page
      .locator('#tenant-create', { hasText: 'Too many changes in a minute — try again in 1 s.' })
      .waitFor()
    await settled(page)
    expect(errors).toEqual([])
    await context.close()
  })

  it('count writes whose session or CSRF token fails per client address, as on /v1', async () => {
    const me = await owner()
    const ws = await activeWorkspace(server.core, me.id)
    const forged = () =>
      fetch(`${server.baseUrl}/app/workspaces/${ws}/tenants`, {
        method: 'POST',
        headers: { cookie: me.headers.cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ _csrf: 'forged', name: 'Forged', slug: 'forged' }),
      })
    for (let i = 0; i < 20; i++) expect((await forged()).status).toBe(403)
    const refused = await forged()
    expect(refused.status).toBe(429)
    expect(await refused.text()).toContain('Too many changes in a minute — try again in 3 s.')
  })
})
