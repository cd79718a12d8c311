import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createHash } from 'node:crypto'
import type { Server } from 'bun'
import { createFetch } from '../src/app'
import { testApp } from './support/app'
import { startTestServer, type TestServer } from './support/server'
import { json, type PlatformUser, signUpUser, waitForState } from './support/users'

let server: TestServer
let owner: PlatformUser
let workspaceId: string

beforeAll(async () => {
  server = await startTestServer()
  owner = await signUpUser(server, { email: 'headers@example.com', password: 'headers-pass-1', name: 'H' })
  const created = await json(owner.agent, 'POST', '/v1/workspaces', { name: 'Headers Inc' })
  expect(created.status).toBe(201)
  workspaceId = String((await waitForState(owner.agent, created.body.id, 'active')).id)
})
afterAll(() => server.stop())

/** The directives of a Content-Security-Policy header, by name. */
function directives(res: Response): Record<string, string[]> {
  const csp = res.headers.get('content-security-policy')
  expect(csp).toBeTruthy()
  const out: Record<string, string[]> = {}
  for (const part of csp!.split(';')) {
    const [name, ...values] = part.trim().split(/\s+/)
    if (name) out[name] = values
  }
  return out
}

function expectControlPlaneHeaders(res: Response) {
  expect(res.headers.get('x-content-type-options')).toBe('nosniff')
  expect(res.headers.get('x-frame-options')).toBe('DENY')
  expect(res.headers.get('referrer-policy')).toBe('same-origin')
  const csp = directives(res)
  expect(csp['script-src']).toEqual(["'self'"])
  expect(csp['frame-ancestors']).toEqual(["'none'"])
  expect(csp['base-uri']).toEqual(["'none'"])
  expect(csp['form-action']).toContain("'self'")
  expect(csp['object-src'] ?? csp['default-src']).toEqual(["'none'"])
  // No inline script or style attribute anywhere in the dashboard.
  expect(csp['script-src']).not.toContain("'unsafe-inline'")
  expect(csp['style-src']).not.toContain("'unsafe-inline'")
  expect(res.headers.get('strict-transport-security')).toBeNull()
}

/** The identity plane's headers, and the policy of a page or of a JSON answer that is none. */
function expectIdentityHeaders(res: Response, kind: 'page' | 'document' = 'page') {
  if (kind === 'document') {
    expect(res.headers.get('content-security-policy')).toBe(
      "default-src 'none'; frame-ancestors 'none'; base-uri 'none'",
    )
  } else {
    expect(directives(res)['script-src']).toContain("'self'")
  }
  expectPlaneHeaders(res)
}

function expectPlaneHeaders(res: Response) {
  expect(res.headers.get('x-content-type-options')).toBe('nosniff')
  expect(res.headers.get('x-frame-options')).toBe('DENY')
  const csp = directives(res)
  expect(csp['frame-ancestors']).toEqual(["'none'"])
  expect(csp['base-uri']).toEqual(["'none'"])
  expect(csp['default-src']).toEqual(["'none'"])
  expect(csp['script-src'] ?? []).not.toContain("'unsafe-inline'")
  expect(res.headers.get('strict-transport-security')).toBeNull()
}

const get = (path: string, init: RequestInit = {}) =>
  fetch(`${server.baseUrl}${path}`, { redirect: 'manual', ...init })

describe('control plane security headers', () => {
  it('are on dashboard pages, API answers and redirects', async () => {
    for (const path of [
      '/app/workspaces',
      `/app/workspaces/${workspaceId}`,
      `/app/workspaces/${workspaceId}/apps`,
    ]) {
      const res = await owner.agent.request(path)
      expect(res.status).toBe(200)
      expectControlPlaneHeaders(res)
      expect(res.headers.get('cache-control')).toBe('no-store')
    }
    const signedOut = await get('/app/workspaces')
    expect(signedOut.status).toBe(303)
    expectControlPlaneHeaders(signedOut)
    const login = await get('/v1/auth/login')
    expect(login.status).toBe(302)
    expectControlPlaneHeaders(login)
    const page = await get('/app/signed-out')
    expect(page.status).toBe(200)
    expectControlPlaneHeaders(page)
  })

  it('are on 401, 404, 413 and 422 errors', async () => {
    const unauthenticated = await get('/v1/workspaces')
    expect(unauthenticated.status).toBe(401)
    expectControlPlaneHeaders(unauthenticated)
    const missing = await get('/v1/nothing-here')
    expect(missing.status).toBe(404)
    expectControlPlaneHeaders(missing)
    const invalid = await json(owner.agent, 'POST', '/v1/workspaces', { name: 42 })
    expect(invalid.status).toBe(422)
    expectControlPlaneHeaders(invalid.res)
    const notJson = await json(owner.agent, 'POST', '/v1/workspaces', '{"name":')
    expect(notJson.status).toBe(422)
    expectControlPlaneHeaders(notJson.res)
    const tooLarge = await json(owner.agent, 'POST', '/v1/workspaces', 'x'.repeat(2 * 1024 * 1024))
    expect(tooLarge.status).toBe(413)
    expectControlPlaneHeaders(tooLarge.res)
  })

  it('forbid caching of every answer that carries a secret or a token', async () => {
    const me = await json(owner.agent, 'GET', '/v1/auth/me')
    expect(me.body.csrf_token).toBeTruthy()
    expect(me.res.headers.get('cache-control')).toBe('no-store')
    const app = await json(owner.agent, 'POST', `/v1/workspaces/${workspaceId}/apps`, {
      name: 'Secretive',
      redirect_uris: ['https://rp.example.com/cb'],
    })
    expect(app.status).toBe(201)
    expect(app.body.client_secret).toBeTruthy()
    expect(app.res.headers.get('cache-control')).toBe('no-store')
    const start = await get('/v1/auth/device/start', { method: 'POST' })
    expect(start.status).toBe(200)
    expect(start.headers.get('cache-control')).toBe('no-store')
    const { device_code } = (await start.json()) as { device_code: string }
    const poll = await get('/v1/auth/device/poll', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ device_code }),
    })
    expect(poll.status).toBe(200)
    expect(poll.headers.get('cache-control')).toBe('no-store')
  })

  it('let static assets keep their caching', async () => {
    const htmx = await get('/public/htmx.min.js')
    expect(htmx.status).toBe(200)
    expect(htmx.headers.get('cache-control')).toBe('public, max-age=86400')
    expect(htmx.headers.get('x-content-type-options')).toBe('nosniff')
  })

  it('serve an SVG favicon that the dashboard and the hosted pages link, and their policies allow', async () => {
    const icon = await get('/public/favicon.svg')
    expect(icon.status).toBe(200)
    expect(icon.headers.get('content-type')).toBe('image/svg+xml')
    expect(icon.headers.get('cache-control')).toBe('public, max-age=86400')
    expect(icon.headers.get('x-ratelimit-limit')).toBeNull()
    expect(await icon.text()).toStartWith('<svg xmlns="http://www.w3.org/2000/svg"')
    const link = '<link rel="icon" type="image/svg+xml" href="/public/favicon.svg"/>'
    const dashboard = await get('/app/signed-out')
    expect(await dashboard.text()).toContain(link)
    const hosted = await get('/i/platform/forgot-password')
    expect(await hosted.text()).toContain(link)
    expect(directives(hosted)['img-src']).toEqual(["'self'"])
    const shell = await owner.agent.request('/app/workspaces')
    expect(await shell.text()).toContain(link)
  })
})

describe('identity plane security headers', () => {
  it('are on pages oidc-provider renders: device code input, logout, errors', async () => {
    const device = await get('/i/platform/device')
    expect(device.status).toBe(200)
    expect(await device.text()).toContain('op.deviceInputForm')
    expectIdentityHeaders(device)
    // The page carries an xsrf token and sets a session cookie: no cache may keep it.
    expect(device.headers.get('cache-control')).toBe('no-store')
    // Without a session, oidc-provider answers logout with its own self-submitting form: the
    // policy must allow exactly that inline script, by hash.
    const logout = await get('/i/platform/session/end')
    expect(logout.status).toBe(200)
    const script = /<script>([\s\S]*?)<\/script>/.exec(await logout.text())?.[1]
    expect(script).toContain('submit()')
    expectIdentityHeaders(logout)
    const hash = createHash('sha256').update(script!).digest('base64')
    expect(directives(logout)['script-src']).toContain(`'sha256-${hash}'`)
    const error = await get('/i/platform/auth?client_id=nobody&response_type=code&scope=openid')
    expect(error.status).toBe(400)
    expect(error.headers.get('content-type')).toContain('text/html')
    expectIdentityHeaders(error)
    const unknownRoute = await get('/i/platform/no-such-endpoint')
    expect(unknownRoute.status).toBe(404)
    expectIdentityHeaders(unknownRoute)
  })

  it('are on our own hosted pages and on a workspace instance', async () => {
    const forgot = await get('/i/platform/forgot-password')
    expect(forgot.status).toBe(200)
    expectIdentityHeaders(forgot)
    expect(forgot.headers.get('cache-control')).toBe('no-store')
    // Discovery and JWKS, answered by the provider, then from the cache: the document policy.
    for (let i = 0; i < 2; i++) {
      const discovery = await get(`/i/${workspaceId}/.well-known/openid-configuration`)
      expect(discovery.status).toBe(200)
      expectIdentityHeaders(discovery, 'document')
      const jwks = await get(`/i/${workspaceId}/jwks`)
      expect(jwks.status).toBe(200)
      expectIdentityHeaders(jwks, 'document')
    }
    const noInstance = await get('/i/00000000-0000-4000-8000-000000000000/device', {
      headers: { accept: 'text/html' },
    })
    expect(noInstance.status).toBe(404)
    expectIdentityHeaders(noInstance)
  })

  it('forbid caching of the token and device authorization endpoints', async () => {
    const device = await get('/i/platform/device/auth', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'client_id=gatehouse-cli&scope=openid',
    })
    expect(device.status).toBe(200)
    expect(((await device.json()) as { device_code?: string }).device_code).toBeTruthy()
    expect(device.headers.get('cache-control')).toBe('no-store')
    expectIdentityHeaders(device, 'document')
    const res = await get('/i/platform/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&client_id=nobody&client_secret=x',
    })
    expect(res.status).toBeGreaterThanOrEqual(400)
    expect(res.headers.get('cache-control')).toBe('no-store')
    expectIdentityHeaders(res, 'document')
  })
})

describe('with an https BASE_URL', () => {
  // The front door itself, in process: the same code path Bun.serve calls.
  let handle: (request: Request) => Promise<Response> | Response
  let cleanup: () => Promise<void>

  beforeAll(async () => {
    const { core, identity, app } = await testApp({ BASE_URL: 'https://gatehouse.example' })
    // A route that fails, as an unforeseen bug would.
    app.get('/v1/test-failure', () => {
      throw new Error('boom at /src/somewhere.ts:1:1')
    })
    const fetchHandler = createFetch(core, app, { identity })
    const fakeServer = { requestIP: () => ({ address: '127.0.0.1', family: 'IPv4', port: 1 }) }
    handle = (request) => fetchHandler(request, fakeServer as unknown as Server<unknown>)
    cleanup = () => core.store.close()
  })
  afterAll(() => cleanup())

  const HSTS = 'max-age=31536000; includeSubDomains'

  it('sends HSTS on both planes, also on a 500', async () => {
    for (const path of ['/app/', '/v1/auth/me', '/healthz', '/v1/nothing-here']) {
      const res = await handle(new Request(`https://gatehouse.example${path}`))
      expect(res.headers.get('strict-transport-security')).toBe(HSTS)
    }
    const failed = await handle(new Request('https://gatehouse.example/v1/test-failure'))
    expect(failed.status).toBe(500)
    expect(failed.headers.get('strict-transport-security')).toBe(HSTS)
    expect(failed.headers.get('x-content-type-options')).toBe('nosniff')
    expect(failed.headers.get('cache-control')).toBe('no-store')
    expect(await failed.text()).not.toContain('.ts:')
    for (const path of ['/i/platform/device', '/i/platform/.well-known/openid-configuration']) {
      const res = await handle(new Request(`https://gatehouse.example${path}`))
      expect(res.status).toBe(200)
      expect(res.headers.get('strict-transport-security')).toBe(HSTS)
      expect(res.headers.get('x-frame-options')).toBe('DENY')
    }
  })

  it('answers a URL it has seen (its host and path remembered, the answer cached) like the first time', async () => {
    const url = 'https://gatehouse.example/i/platform/.well-known/openid-configuration'
    const answers = []
    for (let i = 0; i < 3; i++) answers.push(await handle(new Request(url)))
    const bodies = await Promise.all(answers.map((res) => res.text()))
    for (const res of answers) {
      expect(res.status).toBe(200)
      expect(res.headers.get('strict-transport-security')).toBe(HSTS)
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
      expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
    }
    expect(new Set(bodies).size).toBe(1)
    // Each answer is the request's own: its own id.
    expect(new Set(answers.map((res) => res.headers.get('x-request-id'))).size).toBe(3)
    // The same path on the control plane's side is still the control plane's, query or not.
    for (const path of ['/healthz', '/healthz', '/healthz?x=1']) {
      const res = await handle(new Request(`https://gatehouse.example${path}`))
      expect(res.status).toBe(200)
      expect(res.headers.get('x-request-id')).toBeTruthy()
    }
  })
})
