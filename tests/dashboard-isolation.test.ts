import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startTestServer, type TestServer } from './support/server'
import { json, type PlatformUser, signUpUser, verifyPlatformEmail } from './support/users'

let server: TestServer
let alice: PlatformUser
let bob: PlatformUser
let ws: string
let appId: string

beforeAll(async () => {
  server = await startTestServer()
  alice = await signUpUser(server, {
    email: 'alice@example.com',
    password: 'alice-password-1',
    name: 'Alice',
  })
  bob = await signUpUser(server, { email: 'bob@example.com', password: 'bob-password-123', name: 'Bob' })
  const created = await alice.agent.request('/app/workspaces', {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-csrf-token': alice.csrf,
      'hx-request': 'true',
    },
    body: 'name=Wonderland',
  })
  ws = created.headers.get('hx-redirect')!.split('/').pop()!
  const deadline = Date.now() + 10_000
  while (
    !(await (await alice.agent.request(`/app/partials/workspaces/${ws}/status`)).text()).includes(
      'badge active',
    )
  ) {
    if (Date.now() > deadline) throw new Error('workspace never became active')
    await Bun.sleep(50)
  }
  const app = await alice.agent.request(`/app/workspaces/${ws}/apps`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-csrf-token': alice.csrf,
      'hx-request': 'true',
    },
    body: new URLSearchParams({
      name: 'Rabbit Hole',
      app_type: 'web',
      redirect_uris: 'https://rabbit.example/cb',
    }).toString(),
  })
  appId = (await app.text()).match(/id="app-(app_[0-9A-Z]+)"/)![1]!
})
afterAll(() => server.stop())

const routes = () => [
  ['GET', `/app/workspaces/${ws}`],
  ['GET', `/app/workspaces/${ws}/settings`],
  ['GET', `/app/workspaces/${ws}/apps`],
  ['GET', `/app/partials/workspaces/${ws}/status`],
  ['POST', `/app/workspaces/${ws}/retry-provisioning`],
  ['POST', `/app/workspaces/${ws}/apps`],
  ['DELETE', `/app/workspaces/${ws}/apps/${appId}`],
]

describe('dashboard isolation', () => {
  it('answers the owner with 200 on every workspace page', async () => {
    for (const [method, path] of routes().filter(([m]) => m === 'GET')) {
      const res = await alice.agent.request(path!, { method })
      expect(`${method} ${path} ${res.status}`).toBe(`${method} ${path} 200`)
      expect(res.headers.get('content-type')).toContain('text/html')
    }
  })

  it("answers 404 with an HTML page on every dashboard route of another user's workspace", async () => {
    for (const [method, path] of routes()) {
      const res = await bob.agent.request(path!, {
        method,
        headers: { 'x-csrf-token': bob.csrf, 'content-type': 'application/x-www-form-urlencoded' },
        body: method === 'GET' ? undefined : 'name=Mine&redirect_uris=https%3A%2F%2Fx.example%2Fcb',
      })
      expect(`${method} ${path} ${res.status}`).toBe(`${method} ${path} 404`)
      const text = await res.text()
      expect(text).toContain('Workspace not found')
      expect(text).not.toContain('Wonderland')
    }
    // htmx requests get a fragment, not a page
    const fragment = await bob.agent.request(`/app/partials/workspaces/${ws}/status`, {
      headers: { 'hx-request': 'true' },
    })
    expect(fragment.status).toBe(404)
    expect(await fragment.text()).toStartWith('<div class="alert error"')
    // Alice's app survived Bob's delete attempt.
    expect(await (await alice.agent.request(`/app/workspaces/${ws}/apps`)).text()).toContain('Rabbit Hole')
    expect(await (await bob.agent.request('/app/workspaces')).text()).not.toContain('Wonderland')
  })

  it('sends a signed-out browser to the login with the page as next, and htmx via HX-Redirect', async () => {
    const page = await fetch(`${server.baseUrl}/app/workspaces/${ws}`, { redirect: 'manual' })
    expect(page.status).toBe(303)
    expect(page.headers.get('location')).toBe(
      `/v1/auth/login?next=${encodeURIComponent(`/app/workspaces/${ws}`)}`,
    )
    const htmx = await fetch(`${server.baseUrl}/app/partials/workspaces/${ws}/status`, {
      headers: { 'hx-request': 'true' },
    })
    expect(htmx.status).toBe(401)
    expect(htmx.headers.get('hx-redirect')).toStartWith('/v1/auth/login?next=')
  })

  it('tells a member without the role, in plain words, who may do what the dashboard refused', async () => {
    const carol = await signUpUser(server, {
      email: 'carol@example.com',
      password: 'carol-password-1',
      name: 'Carol',
    })
    await verifyPlatformEmail(server, 'carol@example.com')
    const added = await json(alice.agent, 'POST', `/v1/workspaces/${ws}/members`, {
      email: 'carol@example.com',
      role: 'viewer',
    })
    expect(added.body).toMatchObject({ role: 'viewer', status: 'active' })
    const refusal = async (method: string, path: string, htmx: boolean) => {
      const res = await carol.agent.request(path, {
        method,
        headers: {
          'x-csrf-token': carol.csrf,
          'content-type': 'application/x-www-form-urlencoded',
          ...(htmx ? { 'hx-request': 'true' } : {}),
        },
        body: 'name=Mine&redirect_uris=https%3A%2F%2Fx.example%2Fcb',
      })
      expect(res.status).toBe(403)
      return res.text()
    }
    // A write (workspace:write) and an admin change (workspace:admin), as a fragment and as a page.
    const write = await refusal('POST', `/app/workspaces/${ws}/apps`, true)
    expect(write).toContain('Only a developer, admin or owner of this workspace can do this.')
    const admin = await refusal('POST', `/app/workspaces/${ws}/settings/machine-keys`, false)
    expect(admin).toContain('Only an admin or owner of this workspace can do this.')
    for (const text of [write, admin]) expect(text).not.toContain('scope')
    // The JSON API still names the scope, for the programs that read it.
    const api = await json(carol.agent, 'POST', `/v1/workspaces/${ws}/machine-keys`, {
      name: 'mine',
      scopes: ['workspace:read'],
    })
    expect(api.status).toBe(403)
    expect(api.body).toEqual({ detail: 'This action needs the workspace:admin scope' })
  })

  it('refuses a dashboard mutation without the CSRF token', async () => {
    const res = await alice.agent.request(`/app/workspaces/${ws}/apps/${appId}`, { method: 'DELETE' })
    expect(res.status).toBe(403)
    expect(await (await alice.agent.request(`/app/workspaces/${ws}/apps`)).text()).toContain('Rabbit Hole')
  })
})
