import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { loginRequestKey, parseLoginCookie } from '../src/features/auth/login-binding'
import { loginVerifierContext } from '../src/features/auth/service'
import { pkceS256 } from '../src/shared/crypto'
import { testApp } from './support/app'
import { Agent } from './support/browserless'
import { startTestServer, type TestServer } from './support/server'
import { type PlatformUser, signUpUser } from './support/users'

let server: TestServer
let alice: PlatformUser

beforeAll(async () => {
  server = await startTestServer()
  alice = await signUpUser(server, {
    email: 'alice@example.com',
    password: 'alice password 1',
    name: 'Alice',
  })
})
afterAll(() => server.stop())

const atCallback = (u: URL) => u.pathname === '/v1/auth/callback'

/** Starts a dashboard login with an agent that holds an instance session; the callback URL, not opened. */
async function callbackUrlOf(agent: Agent, query = ''): Promise<URL> {
  const reached = await agent.follow(`/v1/auth/login${query}`, {}, atCallback)
  expect(reached.url.pathname).toBe('/v1/auth/callback')
  expect(reached.url.searchParams.get('code')).toBeTruthy()
  return reached.url
}

const meStatus = async (agent: Agent) => (await agent.request('/v1/auth/me')).status

const sessionCookieIn = (res: Response) => res.headers.getSetCookie().find((c) => c.startsWith('gh_session='))

describe('the login transaction cookie', () => {
  it('is set by /v1/auth/login: HttpOnly, SameSite=Lax, Path=/, 10 minutes', async () => {
    const res = await fetch(`${server.baseUrl}/v1/auth/login`, { redirect: 'manual' })
    expect(res.status).toBe(302)
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('gh_login='))!
    expect(cookie).toBeDefined()
    expect(cookie).toContain('HttpOnly')
    expect(cookie).toContain('SameSite=Lax')
    expect(cookie).toContain('Path=/;')
    expect(cookie).toContain('Max-Age=600')
    expect(cookie).not.toContain('Secure')
    // The value is a browser secret, never the state sent through the identity provider.
    const state = new URL(res.headers.get('location')!).searchParams.get('state')!
    expect(cookie).not.toContain(state)
  })

  it('is Secure with a __Host- name when BASE_URL is https, so a sibling subdomain cannot plant one', async () => {
    const { app } = await testApp({ BASE_URL: 'https://auth.example.com' })
    const res = await app.handle(new Request('https://auth.example.com/v1/auth/login'))
    expect(res.status).toBe(302)
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('__Host-gh_login='))!
    expect(cookie).toContain('; Secure')
    expect(cookie).toContain('Path=/;')
    expect(cookie).not.toContain('Domain=')
  })
})

describe('a callback URL opened in another browser (login CSRF)', () => {
  it('is refused without the cookie of the browser that started it, and works once in that browser', async () => {
    const url = await callbackUrlOf(alice.agent)

    // A victim's browser that never started this login: no login cookie at all.
    const victim = new Agent(server.baseUrl)
    const refused = await victim.request(url)
    expect(refused.status).toBe(400)
    expect(sessionCookieIn(refused)).toBeUndefined()
    expect((await refused.json()) as unknown).toEqual({
      detail: expect.stringContaining('Start again'),
    })
    expect(await meStatus(victim)).toBe(401)

    // A browser with its own login in progress: its cookie does not match this state either.
    const other = new Agent(server.baseUrl)
    await other.request('/v1/auth/login')
    expect(other.cookie('gh_login')).toBeDefined()
    const alsoRefused = await other.request(url)
    expect(alsoRefused.status).toBe(400)
    expect(sessionCookieIn(alsoRefused)).toBeUndefined()
    expect(await meStatus(other)).toBe(401)

    // The browser that started it still finishes: the refusals above did not use the transaction up.
    const done = await alice.agent.request(url)
    expect(done.status).toBe(303)
    expect(sessionCookieIn(done)).toBeDefined()
    const cleared = done.headers.getSetCookie().find((c) => c.startsWith('gh_login='))!
    expect(cleared).toMatch(/Max-Age=0|Expires=Thu, 01 Jan 1970/i)
    expect(alice.agent.cookie('gh_login')).toBeUndefined()

    // Single use, even in the right browser.
    const replay = await alice.agent.request(url)
    expect(replay.status).toBe(400)
    expect(sessionCookieIn(replay)).toBeUndefined()
  })

  it('shows a browser a page that says what happened and how to start again', async () => {
    const url = await callbackUrlOf(alice.agent)
    const res = await new Agent(server.baseUrl).request(url, { headers: { accept: 'text/html' } })
    expect(res.status).toBe(400)
    expect(res.headers.get('content-type')).toStartWith('text/html')
    const html = await res.text()
    expect(html).toContain('another browser')
    expect(html).toContain('href="/v1/auth/login"')
    expect((await alice.agent.request(url)).status).toBe(303)
  })
})

describe('the stored login transaction', () => {
  /** A login `agent` starts, up to its callback URL (not opened): the PKCE challenge it sent and its row. */
  async function startedLogin(agent: Agent) {
    const authorize = new URL((await agent.request('/v1/auth/login')).headers.get('location')!)
    const url = (await agent.follow(authorize, {}, atCallback)).url
    const secret = parseLoginCookie(agent.cookie('gh_login')).at(-1)!
    const key = loginRequestKey(secret, url.searchParams.get('state')!)
    const rows = await server.core.store.query<{ code_verifier: string }>(
      'SELECT code_verifier FROM login_requests WHERE state = $1',
      [key],
    )
    expect(rows).toHaveLength(1)
    return {
      url,
      key,
      challenge: authorize.searchParams.get('code_challenge')!,
      stored: rows[0]!.code_verifier,
    }
  }

  it('holds the PKCE verifier sealed: a reader of the store cannot redeem a code with it', async () => {
    const { url, challenge, stored } = await startedLogin(alice.agent)
    expect(stored).toStartWith('v1.')
    expect(pkceS256(stored)).not.toBe(challenge)
    expect((await alice.agent.request(url)).status).toBe(303)
  })

  it('refuses a row stored plain before verifiers were sealed: that sign-in starts again', async () => {
    const { url, key, challenge, stored } = await startedLogin(alice.agent)
    // The row as the release before wrote it: the verifier itself.
    const plain = server.core.secrets.open(stored, loginVerifierContext(key))
    expect(pkceS256(plain)).toBe(challenge)
    await server.core.store.query('UPDATE login_requests SET code_verifier = $1 WHERE state = $2', [
      plain,
      key,
    ])
    const res = await alice.agent.request(url)
    expect(res.status).toBe(400)
    expect(((await res.json()) as { detail: string }).detail).toContain('Start again')
    expect(sessionCookieIn(res)).toBeUndefined()
  })
})

describe('several sign-ins started in one browser (tabs)', () => {
  it('each finishes, in any order, and the cookie goes once the last is used', async () => {
    expect(alice.agent.cookie('gh_login')).toBeUndefined()
    const first = await callbackUrlOf(alice.agent)
    const second = await callbackUrlOf(alice.agent, '?next=/app/workspaces/new')
    const third = await callbackUrlOf(alice.agent)
    const secondDone = await alice.agent.request(second)
    expect(secondDone.status).toBe(303)
    expect(secondDone.headers.get('location')).toBe('/app/workspaces/new')
    expect(alice.agent.cookie('gh_login')).toBeDefined()
    expect((await alice.agent.request(first)).status).toBe(303)
    expect((await alice.agent.request(third)).status).toBe(303)
    expect(alice.agent.cookie('gh_login')).toBeUndefined()
  })

  it('keeps the newest five: a sixth sign-in retires the oldest', async () => {
    const urls: URL[] = []
    for (let i = 0; i < 6; i++) urls.push(await callbackUrlOf(alice.agent))
    expect((await alice.agent.request(urls[0]!)).status).toBe(400)
    for (const url of urls.slice(1)) expect((await alice.agent.request(url)).status).toBe(303)
  })
})

describe('the lifetime of a login transaction', () => {
  /** GET /v1/auth/login through app.handle: the state sent to the identity provider and the cookie. */
  async function started(app: Awaited<ReturnType<typeof testApp>>['app']) {
    const res = await app.handle(new Request('http://localhost/v1/auth/login'))
    const state = new URL(res.headers.get('location')!).searchParams.get('state')!
    const cookie = res.headers.getSetCookie()[0]!.split(';')[0]!
    return { state, cookie }
  }
  const callback = (app: Awaited<ReturnType<typeof testApp>>['app'], state: string, cookie: string) =>
    app.handle(
      new Request(`http://localhost/v1/auth/callback?error=access_denied&state=${state}`, {
        headers: { cookie },
      }),
    )

  it('is found within 10 minutes (then refused as cancelled) and spent: the cookie is cleared', async () => {
    const { app, core } = await testApp()
    const { state, cookie } = await started(app)
    core.clock.advance(10 * 60_000)
    const res = await callback(app, state, cookie)
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({ detail: 'Sign-in was cancelled or refused.' })
    expect(res.headers.getSetCookie()).toContainEqual(expect.stringMatching(/^gh_login=;.*Max-Age=0/))
    expect((await callback(app, state, cookie)).status).toBe(400)
  })

  it('expires after 10 minutes', async () => {
    const { app, core } = await testApp()
    const { state, cookie } = await started(app)
    core.clock.advance(10 * 60_000 + 1)
    const res = await callback(app, state, cookie)
    expect(res.status).toBe(400)
    expect(((await res.json()) as { detail: string }).detail).toContain('expired')
  })
})
