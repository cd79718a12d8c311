import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startTestServer, type TestServer } from './support/server'
import { json, type PlatformUser, signUpUser, waitForState } from './support/users'

let server: TestServer
let owner: PlatformUser
let workspaceId: string
let cookie: string

beforeAll(async () => {
  server = await startTestServer()
  owner = await signUpUser(server, { email: 'limits@example.com', password: 'limits-pass-1', name: 'L' })
  const created = await json(owner.agent, 'POST', '/v1/workspaces', { name: 'Limits' })
  expect(created.status).toBe(201)
  workspaceId = String((await waitForState(owner.agent, created.body.id, 'active')).id)
  cookie = `gh_session=${owner.agent.cookie('gh_session')}`
})
afterAll(() => server.stop())

const uris = (n: number, base = 'https://rp.example.com/cb') =>
  Array.from({ length: n }, (_, i) => `${base}/${i}`)
const createApp = (body: Record<string, unknown>) =>
  json(owner.agent, 'POST', `/v1/workspaces/${workspaceId}/apps`, { name: 'Many', ...body })

describe('redirect URI counts', () => {
  it('accepts 100 redirect URIs and 100 post-logout URIs', async () => {
    const res = await createApp({ redirect_uris: uris(100), post_logout_redirect_uris: uris(100) })
    expect(res.status).toBe(201)
  })

  it('refuses a 101st redirect URI with a 422', async () => {
    const res = await createApp({ redirect_uris: uris(101) })
    expect(res.status).toBe(422)
    expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'redirect_uris'], type: 'too_long' })
  })

  it('refuses a 101st post-logout URI with a 422', async () => {
    const res = await createApp({ redirect_uris: uris(1), post_logout_redirect_uris: uris(101) })
    expect(res.status).toBe(422)
    expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'post_logout_redirect_uris'], type: 'too_long' })
  })

  it('refuses 101 redirect URIs in the dashboard form, next to the field', async () => {
    const res = await owner.agent.request(`/app/workspaces/${workspaceId}/apps`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'hx-request': 'true' },
      body: new URLSearchParams({
        _csrf: owner.csrf,
        name: 'Form',
        app_type: 'web',
        redirect_uris: uris(101).join('\n'),
        post_logout_redirect_uris: '',
      }).toString(),
    })
    expect(res.status).toBe(422)
    expect(await res.text()).toContain('Use at most 100 redirect URIs.')
  })
})

// C0 and C1 controls, DEL, the bidi embeddings/overrides and isolates, the implicit direction
// marks, line/paragraph separators and a lone surrogate.
const HOSTILE = {
  NUL: '\u0000',
  'unit separator': '\u001f',
  newline: '\n',
  DEL: '\u007f',
  'C1 NEL': '\u0085',
  'C1 CSI': '\u009b',
  'left-to-right embedding': '\u202a',
  'right-to-left override': '\u202e',
  'left-to-right isolate': '\u2066',
  'pop directional isolate': '\u2069',
  'left-to-right mark': '\u200e',
  'right-to-left mark': '\u200f',
  'arabic letter mark': '\u061c',
  'line separator': '\u2028',
  'lone surrogate': '\ud800',
}

describe('names', () => {
  for (const [what, char] of Object.entries(HOSTILE)) {
    it(`refuse a ${what} (U+${char.charCodeAt(0).toString(16).padStart(4, '0')}) in workspace and app names`, async () => {
      const name = `Acme${char}gpj.exe`
      const created = await json(owner.agent, 'POST', '/v1/workspaces', { name })
      expect(created.status).toBe(422)
      expect(created.body.detail[0].loc).toEqual(['body', 'name'])
      const renamed = await json(owner.agent, 'PATCH', `/v1/workspaces/${workspaceId}`, { name })
      expect(renamed.status).toBe(422)
      const app = await createApp({ name, redirect_uris: uris(1) })
      expect(app.status).toBe(422)
      expect(app.body.detail[0].loc).toEqual(['body', 'name'])
    })
  }

  it('keep letters of every script, emoji with joiners, and right-to-left text', async () => {
    for (const name of ['Zoë & Søren', 'שלום עולם', 'مرحبا', '東京', '👩‍💻 team', 'क्षत्रिय']) {
      const created = await json(owner.agent, 'POST', '/v1/workspaces', { name })
      expect(created.status).toBe(201)
      expect(created.body.name).toBe(name)
    }
  })

  it('are refused in the dashboard forms with the message shown next to the field', async () => {
    const form = (path: string, fields: Record<string, string>) =>
      owner.agent.request(path, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'hx-request': 'true' },
        body: new URLSearchParams({ _csrf: owner.csrf, ...fields }).toString(),
      })
    const workspace = await form('/app/workspaces', { name: 'Evil\u202eexe.txt' })
    expect(workspace.status).toBe(422)
    expect(await workspace.text()).toContain('control characters')
    const app = await form(`/app/workspaces/${workspaceId}/apps`, {
      name: 'Evil\u0007',
      app_type: 'web',
      redirect_uris: 'https://rp.example.com/cb',
    })
    expect(app.status).toBe(422)
    expect(await app.text()).toContain('control characters')
  })
})

describe('request body size', () => {
  const big = JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) })

  const expectTooLarge = async (res: Response) => {
    expect(res.status).toBe(413)
    expect(res.headers.get('content-type')).toContain('application/json')
    const body = (await res.json()) as { detail: unknown }
    expect(typeof body.detail).toBe('string')
  }

  /** A workspace create whose body streams in chunks (no Content-Length). */
  const postChunked = (body: ReadableStream<Uint8Array>) =>
    fetch(`${server.baseUrl}/v1/workspaces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie, 'x-csrf-token': owner.csrf },
      body,
      duplex: 'half',
    } as RequestInit)

  it('is capped at 1 MiB with a 413 and a JSON detail (Content-Length)', async () => {
    const res = await fetch(`${server.baseUrl}/v1/workspaces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie, 'x-csrf-token': owner.csrf },
      body: big,
    })
    await expectTooLarge(res)
  })

  it('is capped for chunked bodies too, which carry no Content-Length', async () => {
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024))
    let sent = 0
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode('{"name":"'))
        if (sent >= 3 * 1024 * 1024) {
          controller.enqueue(new TextEncoder().encode('"}'))
          controller.close()
          return
        }
        controller.enqueue(chunk)
        sent += chunk.byteLength
      },
    })
    const res = await postChunked(body)
    await expectTooLarge(res)
  })

  it('is capped before authentication: an anonymous body is refused the same way', async () => {
    const res = await fetch(`${server.baseUrl}/v1/auth/device/poll`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: big,
    })
    await expectTooLarge(res)
  })

  it('lets a chunked body under the cap through to validation', async () => {
    const text = JSON.stringify({ name: 'y'.repeat(900 * 1024) })
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        const bytes = new TextEncoder().encode(text)
        for (let i = 0; i < bytes.length; i += 50_000) controller.enqueue(bytes.slice(i, i + 50_000))
        controller.close()
      },
    })
    const res = await postChunked(body)
    expect(res.status).toBe(422)
    expect(((await res.json()) as { detail: { type: string }[] }).detail[0]!.type).toBe('string_too_long')
  })

  it('answers a dashboard form over the cap with a 413 page', async () => {
    const res = await fetch(`${server.baseUrl}/app/workspaces`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: `_csrf=${owner.csrf}&name=${'z'.repeat(2 * 1024 * 1024)}`,
    })
    expect(res.status).toBe(413)
    expect(await res.text()).toContain('too large')
  })
})

describe('the Host header', () => {
  // Bun builds request.url from Host: a malformed one made the front door throw (a 500 with a stack).
  for (const host of ['a:b:c', '[::1', 'localhost:99999', '%', 'x y', '']) {
    it(`answers 400 to Host ${JSON.stringify(host)} on both planes`, async () => {
      for (const path of ['/v1/workspaces', '/app/', '/i/platform/.well-known/openid-configuration']) {
        const res = await fetch(`${server.baseUrl}${path}`, { headers: { host } })
        expect(res.status).toBe(400)
        expect(await res.json()).toEqual({ detail: 'Invalid Host header' })
        expect(res.headers.get('x-content-type-options')).toBe('nosniff')
        expect(res.headers.get('x-frame-options')).toBe('DENY')
      }
    })
  }
})
