import { afterAll, afterEach, beforeAll, describe, expect, it, spyOn } from 'bun:test'
import { rmSync } from 'node:fs'
import { signUp } from '../src/identity'
import { Agent } from './support/browserless'
import { tempDir } from './support/core'
import { activeWorkspace, registerApp } from './support/instances'
import { startTestServer, type TestServer } from './support/server'
import { openSignInForm } from './support/sign-in'

let server: TestServer
let ws: string
const dataDir = tempDir()
// Koa's default error handler writes stacks with console.error: nothing may reach it.
const stderr = spyOn(console, 'error')
const restore: (() => void)[] = []

beforeAll(async () => {
  server = await startTestServer({}, dataDir)
  ws = await activeWorkspace(server.core)
})
afterAll(async () => {
  stderr.mockRestore()
  await server.stop()
  rmSync(dataDir, { recursive: true, force: true })
})
afterEach(() => {
  for (const undo of restore.splice(0)) undo()
  const calls = stderr.mock.calls.length
  stderr.mockClear()
  expect(calls).toBe(0)
})

const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
const STACK = /\n\s+at |TypeError|ReferenceError|node_modules|\.js:\d+/
/** A request id of our own. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** Asserts a proper client-error answer: a 4xx, an HTML page or a JSON body, no trace of a stack. */
async function expectProperError(res: Response, label: string) {
  const body = await res.text()
  const type = res.headers.get('content-type') ?? ''
  expect({ label, status: res.status >= 400 && res.status < 500 }).toEqual({ label, status: true })
  expect({ label, html: type.startsWith('text/html') || type.startsWith('application/json') }).toEqual({
    label,
    html: true,
  })
  if (type.startsWith('text/html')) expect(body).toStartWith('<!doctype html>')
  else expect(() => JSON.parse(body)).not.toThrow()
  expect({ label, stack: STACK.test(body) }).toEqual({ label, stack: false })
}

describe('the device pages of an instance (POST /device and GET /device/:uid)', () => {
  for (const instance of ['platform', 'workspace']) {
    it(`answer a 4xx page without a session cookie, whatever the body (${instance})`, async () => {
      const base = `${server.baseUrl}/i/${instance === 'platform' ? 'platform' : ws}`
      const bodies: [string, RequestInit][] = [
        ['no body', {}],
        ['empty form', { headers: FORM, body: '' }],
        ['user code', { headers: FORM, body: 'user_code=BCDF-GHJK' }],
        ['forged xsrf', { headers: FORM, body: 'xsrf=abc&user_code=BCDF-GHJK&confirm=yes' }],
        ['json', { headers: { 'content-type': 'application/json' }, body: '{"user_code":"BCDF-GHJK"}' }],
        ['garbage', { headers: FORM, body: '%%%&&==\u0000' }],
      ]
      for (const accept of ['text/html', 'application/json', '*/*']) {
        for (const [label, init] of bodies) {
          const headers = { accept, ...(init.headers as Record<string, string>) }
          const res = await fetch(`${base}/device`, { method: 'POST', ...init, headers })
          await expectProperError(res, `POST ${instance} ${label} ${accept}`)
        }
        const bogusCookie = await fetch(`${base}/device`, {
          method: 'POST',
          headers: { accept, cookie: '_session=forged; _session.sig=forged', ...FORM },
          body: 'user_code=BCDF-GHJK',
        })
        await expectProperError(bogusCookie, `POST ${instance} forged cookie ${accept}`)
        const resume = await fetch(`${base}/device/unknown-uid`, { headers: { accept } })
        await expectProperError(resume, `GET ${instance} /device/unknown-uid ${accept}`)
      }
    })
  }

  it('tells a browser without the form cookie to open the page again, with a link to it', async () => {
    const res = await fetch(`${server.baseUrl}/i/${ws}/device`, {
      method: 'POST',
      headers: { accept: 'text/html', ...FORM },
      body: 'user_code=BCDF-GHJK',
    })
    expect(res.status).toBe(400)
    const html = await res.text()
    expect(html).toContain('Open the device page again')
    expect(html).toContain(`href="${server.baseUrl}/i/${ws}/device"`)
  })

  it('re-renders a working form when the session exists but the CSRF field is missing or wrong', async () => {
    const agent = new Agent(server.baseUrl)
    const page = await agent.request(`/i/${ws}/device`)
    expect(page.status).toBe(200)
    for (const body of ['user_code=BCDF-GHJK', 'xsrf=wrong&user_code=BCDF-GHJK']) {
      const res = await agent.request(`/i/${ws}/device`, { method: 'POST', headers: FORM, body })
      expect(res.status).toBe(400)
      const html = await res.text()
      expect(html).toContain('id="op.deviceInputForm"')
      expect(html).toMatch(/name="xsrf" value="[0-9a-f]{48}"/)
    }
  })

  it('says an unknown code is not valid, in the form again', async () => {
    const agent = new Agent(server.baseUrl)
    const page = await agent.request(`/i/${ws}/device`)
    const xsrf = /name="xsrf" value="([0-9a-f]+)"/.exec(await page.text())![1]!
    const res = await agent.request(`/i/${ws}/device`, {
      method: 'POST',
      headers: FORM,
      body: `xsrf=${xsrf}&user_code=BCDF-GHJK`,
    })
    // oidc-provider re-renders the form with 200 for a code it does not know.
    expect(res.status).toBe(200)
    expect(await res.text()).toContain('That code is not valid.')
  })
})

describe('other errors of the identity plane', () => {
  it('answers an unknown path with a 404 page or JSON, not plain text', async () => {
    const html = await fetch(`${server.baseUrl}/i/${ws}/no-such-endpoint`, {
      headers: { accept: 'text/html' },
    })
    expect(html.status).toBe(404)
    expect(html.headers.get('content-type')).toStartWith('text/html')
    const json = await fetch(`${server.baseUrl}/i/${ws}/token`, { method: 'PUT' })
    expect(json.status).toBe(404)
    expect(await json.json()).toEqual({
      error: 'not_found',
      error_description: 'There is nothing at this address.',
    })
  })

  it('answers a client id no client can have (a NUL, a control character) as an unknown client on every endpoint that reads one', async () => {
    // PostgreSQL refuses a NUL in text: the client's read failed, and each of these was a 500.
    const at = (path: string) => `${server.baseUrl}/i/${ws}${path}`
    const post = (path: string, body: string) => fetch(at(path), { method: 'POST', headers: FORM, body })
    for (const id of ['%00', 'app%00', '%1F', 'a%0Ab']) {
      const asked: [string, Response][] = [
        ['authorization', await fetch(at(`/auth?client_id=${id}&response_type=code&scope=openid`))],
        [
          'client credentials',
          await post('/token', `grant_type=client_credentials&client_id=${id}&client_secret=s`),
        ],
        ['code', await post('/token', `grant_type=authorization_code&code=x&client_id=${id}`)],
        ['device authorization', await post('/device/auth', `client_id=${id}&scope=openid`)],
        ['introspection', await post('/token/introspection', `token=x&client_id=${id}`)],
        ['revocation', await post('/token/revocation', `token=x&client_id=${id}`)],
        ['pushed authorization', await post('/request', `client_id=${id}&response_type=code`)],
        ['end session', await fetch(at(`/session/end?client_id=${id}`))],
      ]
      for (const [label, res] of asked) await expectProperError(res, `${label}, client_id=${id}`)
    }
    const token = await post('/token', 'grant_type=client_credentials&client_id=%00&client_secret=s')
    expect(token.status).toBe(401)
    expect(await token.json()).toMatchObject({ error: 'invalid_client' })
  })

  it('logs a protocol error event as one JSON line, without the secret that was sent', async () => {
    const app = await registerApp(server.core, ws, {
      type: 'web',
      redirectUris: ['https://rp.example.com/cb'],
    })
    const wrongSecret = 'not-the-secret-0123456789abcdef'
    const res = await fetch(`${server.baseUrl}/i/${ws}/token`, {
      method: 'POST',
      headers: {
        ...FORM,
        authorization: `Basic ${btoa(`${app.clientId}:${wrongSecret}`)}`,
        // A client's own id is not believed (only a trusted proxy's): the line carries ours.
        'x-request-id': 'trace-grant-error',
      },
      body: 'grant_type=client_credentials',
    })
    expect(res.status).toBe(401)
    expect(((await res.json()) as { error: string }).error).toBe('invalid_client')
    const id = res.headers.get('x-request-id')
    expect(id).toMatch(UUID)
    const lines = server.logLines.filter((l) => l.msg === 'identity error' && l.request_id === id)
    expect(lines).toHaveLength(1)
    // The same id as the request's access line, so the two are read together.
    expect(server.logLines.filter((l) => l.msg === 'request' && l.request_id === id)).toHaveLength(1)
    expect(lines[0]).toMatchObject({
      level: 'warn',
      event: 'grant.error',
      instance_id: ws,
      method: 'POST',
      path: '/token',
      status: 401,
      error: 'invalid_client',
      client_id: app.clientId,
    })
    expect(JSON.stringify(lines[0])).not.toContain(wrongSecret)
  })

  it('does not warn about a device poll before approval, a normal step of the flow', async () => {
    const started = await fetch(`${server.baseUrl}/v1/auth/device/start`, { method: 'POST' })
    const { device_code } = (await started.json()) as { device_code: string }
    const poll = await fetch(`${server.baseUrl}/v1/auth/device/poll`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ device_code }),
    })
    expect(((await poll.json()) as { status: string }).status).toBe('pending')
    const pending = server.logLines.filter(
      (l) => l.msg === 'identity error' && l.error === 'authorization_pending',
    )
    expect(pending).toEqual([])
  })

  it('answers a server error as server_error and logs it once at error level, with no stack on stderr', async () => {
    const { provider } = (await server.identity.pool.get(ws))!
    const find = spyOn(provider.Client, 'find').mockImplementation(() =>
      Promise.reject(new Error('store unavailable')),
    )
    restore.push(() => find.mockRestore())
    const res = await fetch(`${server.baseUrl}/i/${ws}/token`, {
      method: 'POST',
      headers: {
        ...FORM,
        authorization: `Basic ${btoa('some-client:some-secret')}`,
      },
      body: 'grant_type=client_credentials',
    })
    expect(res.status).toBe(500)
    const body = await res.text()
    expect(JSON.parse(body)).toEqual({
      error: 'server_error',
      error_description: 'oops! something went wrong',
    })
    const id = res.headers.get('x-request-id')
    expect(id).toMatch(UUID)
    const lines = server.logLines.filter((l) => l.request_id === id && l.level === 'error')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({
      msg: 'identity error',
      event: 'server_error',
      exception: 'Error: store unavailable',
    })
    expect(JSON.stringify(lines[0])).not.toContain('some-secret')
  })

  it('turns an error that escapes oidc-provider into a proper 500 and one JSON log line', async () => {
    const { provider } = (await server.identity.pool.get(ws))!
    // A failure inside oidc-provider's own error handler (here: while it emits the error event)
    // is beyond every handler of the library.
    const emit = provider.emit.bind(provider)
    const failing = spyOn(provider, 'emit').mockImplementation(
      (name: string | symbol, ...args: unknown[]) => {
        if (name === 'grant.error') throw new TypeError('listener failed')
        return emit(name, ...args)
      },
    )
    restore.push(() => failing.mockRestore())
    for (const [accept, type] of [
      ['application/json', 'application/json'],
      ['text/html', 'text/html'],
    ] as const) {
      const res = await fetch(`${server.baseUrl}/i/${ws}/token`, {
        method: 'POST',
        headers: { ...FORM, accept },
        body: 'grant_type=client_credentials',
      })
      expect(res.status).toBe(500)
      expect(res.headers.get('content-type')).toStartWith(type)
      const body = await res.text()
      expect(STACK.test(body)).toBe(false)
      if (type === 'application/json') {
        expect(JSON.parse(body)).toEqual({
          error: 'server_error',
          error_description: 'Something went wrong. Try again.',
        })
      } else expect(body).toContain('Something went wrong. Try again.')
      const id = res.headers.get('x-request-id')
      expect(id).toMatch(UUID)
      const lines = server.logLines.filter((l) => l.request_id === id && l.level === 'error')
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatchObject({
        msg: 'identity plane failed',
        instance_id: ws,
        path: '/token',
        exception: 'TypeError: listener failed',
      })
    }
  })
})

describe('a hosted page posted a form no page of ours sends', () => {
  const INVALID = 'Some fields are not valid. Check them and try again.'
  const HOSTILE = '<script>alert(1)</script>'

  /** The one error mapping's 422 page: the instance's look, nothing of the form or of TypeBox. */
  async function expectInvalidFormPage(res: Response, label: string) {
    const body = await res.text()
    expect({ label, status: res.status }).toEqual({ label, status: 422 })
    expect(res.headers.get('content-type')).toStartWith('text/html')
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(body).toStartWith('<!doctype html>')
    expect({ label, said: body.includes(INVALID) }).toEqual({ label, said: true })
    for (const internal of [HOSTILE, 'Expected', 'maxLength', 'property', '"detail"'])
      expect({ label, internal, shown: body.includes(internal) }).toEqual({ label, internal, shown: false })
    expect({ label, stack: STACK.test(body) }).toEqual({ label, stack: false })
  }

  it('answers the 422 page for a sign-in form without a password or with a 10 KB email, and counts no attempt', async () => {
    const account = { email: 'form@example.com', password: 'correct horse battery' }
    const space = await activeWorkspace(server.core)
    await signUp(server.core, space, account)
    const redirectUri = 'https://rp.example.com/cb'
    const app = await registerApp(server.core, space, { type: 'spa', redirectUris: [redirectUri] })
    const { agent, post, action } = await openSignInForm(server, space, app.clientId, redirectUri)
    const raw = (body: string) => agent.request(action, { method: 'POST', headers: FORM, body })
    const malformed: [string, string][] = [
      ['no password', new URLSearchParams({ email: account.email }).toString()],
      ['no field', ''],
      [
        'a 10 KB email',
        new URLSearchParams({ email: `${HOSTILE}${'a'.repeat(10_240)}`, password: 'x' }).toString(),
      ],
      [
        'a 2 KB password',
        new URLSearchParams({ email: account.email, password: 'p'.repeat(2048) }).toString(),
      ],
      ['the email twice', `email=${HOSTILE}&email=b%40example.com&password=x`],
    ]
    // More than the account's lock (5) and the address's: none of them reaches the password's check.
    for (let round = 0; round < 2; round++)
      for (const [label, body] of malformed) await expectInvalidFormPage(await raw(body), label)
    const signUpAt = new URL(action.href.replace(/\/login$/, '/signup'))
    const signUpForm = await agent.request(signUpAt, {
      method: 'POST',
      headers: FORM,
      body: new URLSearchParams({ email: 'new@example.com', name: 'New' }).toString(),
    })
    await expectInvalidFormPage(signUpForm, 'a sign-up without a password')
    // The browser's form is answered as before: a wrong password is the sign-in page with its message.
    const wrong = await post(account.email, 'wrong password')
    expect(wrong.status).toBe(401)
    expect(await wrong.text()).toContain('Wrong email or password.')
    const right = await post(account.email, account.password)
    expect(right.status).toBe(303)
  })

  it("answers the 422 page for the mailed links' forms without their fields or with one too long", async () => {
    const space = await activeWorkspace(server.core)
    const at = (path: string) => `${server.baseUrl}/i/${space}${path}`
    const forms: [string, string][] = [
      ['/forgot-password', ''],
      ['/forgot-password', `email=${'a'.repeat(400)}%40example.com`],
      ['/reset-password', 'password=a%20new%20password%201'],
      ['/reset-password', `token=${'t'.repeat(1000)}&password=a%20new%20password%201`],
      ['/accept-invite', 'password=a%20new%20password%201'],
    ]
    for (const [path, body] of forms)
      await expectInvalidFormPage(
        await fetch(at(path), { method: 'POST', headers: FORM, body }),
        `${path} ${body.slice(0, 40)}`,
      )
  })
})
