import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Agent } from './support/browserless'
import { activeWorkspace } from './support/instances'
import { startTestServer, type TestServer } from './support/server'

let server: TestServer
const user = { email: 'grace@example.com', password: 'hopper-cobol-1959', name: 'Grace Hopper' }

beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.stop())

let signedUp = false
const isCallbackDone = (u: URL) => u.pathname.startsWith('/app/')

/** /v1/auth/login → hosted page (sign-up the first time, the instance session after) → callback → /app/… */
async function login(agent: Agent, query = ''): Promise<URL> {
  const first = await agent.follow(`/v1/auth/login${query}`, {}, isCallbackDone)
  if (isCallbackDone(first.url)) return first.url
  const html = await first.res.text()
  if (!signedUp) {
    signedUp = true
    const signup = await agent.follow(new URL(html.match(/href="([^"]*\/signup)"/)![1]!, first.url))
    const done = await agent.submit(await signup.res.text(), signup.url, '/signup', user, isCallbackDone)
    return done.url
  }
  return (await agent.submit(html, first.url, '/login', user, isCallbackDone)).url
}

/** Runs a login with an instance session up to the callback; answers the callback's Location as sent. */
async function callbackLocation(agent: Agent, query: string): Promise<string> {
  const atCallback = (u: URL) => u.pathname === '/v1/auth/callback'
  const toCallback = await agent.follow(`/v1/auth/login${query}`, {}, atCallback)
  expect(toCallback.url.pathname).toBe('/v1/auth/callback')
  const callback = await agent.request(toCallback.url)
  expect(callback.status).toBe(303)
  return callback.headers.get('location')!
}

const me = (agent: Agent, headers: Record<string, string> = {}) => agent.request('/v1/auth/me', { headers })

describe('GET /v1/auth/login', () => {
  it('redirects to the platform instance with code, PKCE S256, state, nonce and the API resource', async () => {
    const res = await fetch(`${server.baseUrl}/v1/auth/login`, { redirect: 'manual' })
    expect(res.status).toBe(302)
    const to = new URL(res.headers.get('location')!)
    expect(`${to.origin}${to.pathname}`).toBe(`${server.baseUrl}/i/platform/auth`)
    expect(Object.fromEntries(to.searchParams)).toMatchObject({
      client_id: 'gatehouse-console',
      response_type: 'code',
      code_challenge_method: 'S256',
      redirect_uri: `${server.baseUrl}/v1/auth/callback`,
      resource: `${server.baseUrl}/v1`,
    })
    for (const p of ['state', 'nonce', 'code_challenge'])
      expect(to.searchParams.get(p)?.length).toBeGreaterThan(20)
  })

  it('ignores an unknown or unconfigured idp_hint and shows the sign-in page', async () => {
    for (const hint of ['google', 'myspace']) {
      const res = await fetch(`${server.baseUrl}/v1/auth/login?idp_hint=${hint}`, { redirect: 'manual' })
      expect(new URL(res.headers.get('location')!).searchParams.has('idp_hint')).toBe(false)
      const page = await new Agent(server.baseUrl).follow(res.headers.get('location')!)
      expect(await page.res.text()).toContain('<h1>Sign in</h1>')
    }
  })
})

describe('the dashboard login flow', () => {
  let browser: Agent

  it('lands a new user without workspaces on /app/workspaces/new with a session', async () => {
    browser = new Agent(server.baseUrl)
    const landed = await login(browser)
    expect(landed.pathname).toBe('/app/workspaces/new')
    const cookie = browser.cookie('gh_session')
    expect(cookie?.length).toBeGreaterThan(30)
    const res = await me(browser)
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({
      email: user.email,
      name: user.name,
      auth: 'session',
      is_platform_admin: true,
    })
  })

  it('sets the session cookie HttpOnly and SameSite=Lax, and stores only its hash', async () => {
    const toCallback = await browser.follow('/v1/auth/login', {}, (u) => u.pathname === '/v1/auth/callback')
    const callback = await browser.request(toCallback.url)
    expect(callback.status).toBe(303)
    const cookie = callback.headers.getSetCookie().find((c) => c.startsWith('gh_session='))!
    expect(cookie).toContain('HttpOnly')
    expect(cookie).toContain('SameSite=Lax')
    expect(cookie).toContain('Path=/')
    const value = cookie.split(';')[0]!.split('=')[1]!
    const stored = await server.core.store.query<{ id_hash: string }>('SELECT id_hash FROM sessions')
    expect(stored.length).toBeGreaterThan(0)
    expect(stored.map((r) => r.id_hash)).not.toContain(value)
  })

  it('stores the password as an argon2id hash, what the sign-in bench measures its bound with', async () => {
    const [row] = await server.core.store.query<{ password_hash: string }>(
      'SELECT password_hash FROM accounts WHERE email = $1',
      [user.email],
    )
    expect(row?.password_hash).toStartWith('$argon2id$')
    expect(row?.password_hash).not.toContain(user.password)
  })

  for (const next of [
    'https://evil.example',
    '//evil.example',
    '/\\evil.example',
    'javascript:alert(1)',
    '/.//evil.example',
    '/..//evil.example',
    '/app/%2e%2e/%2e%2e//evil.example',
    '/%2f%2fevil.example',
    '/\t/evil.example',
  ]) {
    it(`drops next=${JSON.stringify(next)}: the callback redirects to the default target here`, async () => {
      // Stops at the callback and reads its Location as sent, so an escape is seen, never followed.
      const location = await callbackLocation(browser, `?next=${encodeURIComponent(next)}`)
      expect(location).toBe('/app/workspaces/new')
      expect(new URL(location, server.baseUrl).origin).toBe(server.baseUrl)
    })
  }

  it('follows a safe next first, then /app/ once the user owns a workspace', async () => {
    expect((await login(browser, `?next=${encodeURIComponent('/app/settings?tab=1')}`)).href).toBe(
      `${server.baseUrl}/app/settings?tab=1`,
    )
    const owner = ((await (await me(browser)).json()) as { id: string }).id
    await activeWorkspace(server.core, owner)
    expect((await login(browser)).pathname).toBe('/app/')
  })

  it('refuses logout without the CSRF token, then logs out of both sessions with it', async () => {
    const noToken = await browser.request('/v1/auth/logout', { method: 'POST' })
    expect(noToken.status).toBe(403)
    const crossSite = await browser.request('/v1/auth/logout', {
      method: 'POST',
      headers: { origin: 'https://evil.example', 'x-csrf-token': 'x' },
    })
    expect(crossSite.status).toBe(403)

    const { csrf_token } = (await (await me(browser)).json()) as { csrf_token: string }
    const out = await browser.request('/v1/auth/logout', {
      method: 'POST',
      headers: { 'x-csrf-token': csrf_token },
    })
    expect(out.status).toBe(303)
    const to = new URL(out.headers.get('location')!)
    expect(`${to.origin}${to.pathname}`).toBe(`${server.baseUrl}/i/platform/session/end`)
    expect(to.searchParams.get('client_id')).toBe('gatehouse-console')
    expect(to.searchParams.get('post_logout_redirect_uri')).toBe(`${server.baseUrl}/app/signed-out`)
    expect(to.searchParams.get('id_token_hint')?.split('.')).toHaveLength(3)
    expect((await me(browser)).status).toBe(401)

    const page = await browser.follow(to)
    const done = await browser.submit(await page.res.text(), page.url, '/session/end/confirm', {
      logout: 'yes',
    })
    expect(done.url.pathname).toBe('/app/signed-out')
    expect(await done.res.text()).toContain('You are signed out')
    // The platform session is gone too: logging in asks for the password again.
    const again = await browser.follow('/v1/auth/login', {}, isCallbackDone)
    expect(await again.res.text()).toContain('<h1>Sign in</h1>')
  })
})

describe('bearer auth on /v1', () => {
  it('answers 401 with WWW-Authenticate without credentials or with a bad token', async () => {
    const none = await fetch(`${server.baseUrl}/v1/auth/me`)
    expect(none.status).toBe(401)
    expect(none.headers.get('www-authenticate')).toStartWith('Bearer')
    expect(await none.json()).toEqual({ detail: 'Not authenticated' })
    const bad = await fetch(`${server.baseUrl}/v1/auth/me`, {
      headers: { authorization: 'Bearer abc.def.ghi' },
    })
    expect(bad.status).toBe(401)
    expect(bad.headers.get('www-authenticate')).toContain('error="invalid_token"')
  })
})

describe('POST /v1/auth/device/poll', () => {
  it('answers 200 pending before approval and expired for an unknown code', async () => {
    const start = await fetch(`${server.baseUrl}/v1/auth/device/start`, { method: 'POST' })
    expect(start.status).toBe(200)
    const started = (await start.json()) as Record<string, unknown>
    expect(started.verification_uri).toBe(`${server.baseUrl}/i/platform/device`)
    expect(String(started.verification_uri_complete)).toContain(`user_code=${started.user_code}`)
    expect(started.interval).toBe(5)
    const poll = (device_code: string) =>
      fetch(`${server.baseUrl}/v1/auth/device/poll`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ device_code }),
      })
    const pending = await poll(String(started.device_code))
    expect(pending.status).toBe(200)
    expect(await pending.json()).toEqual({ status: 'pending' })
    const unknown = await poll('no-such-code')
    expect(unknown.status).toBe(200)
    expect(await unknown.json()).toEqual({ status: 'expired' })
    const invalid = await fetch(`${server.baseUrl}/v1/auth/device/poll`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    })
    expect(invalid.status).toBe(422)
  })
})
