import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import * as oidc from 'openid-client'
import { holdProvisioning, PROVISIONING_CONTROL } from './fixtures/provisioning-control'
import { Agent } from './support/browserless'
import { callApi, keyCaller } from './support/callers'
import { startTestServer, type TestServer } from './support/server'
import { eventually, json, type PlatformUser, signUpEndUser, signUpUser, waitForState } from './support/users'

let server: TestServer
let alice: PlatformUser
let bob: PlatformUser

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/
const RP = 'https://rp.example.com'

beforeAll(async () => {
  // In-process jobs: a test holds a workspace's provisioning to see it before it is active.
  server = await startTestServer({}, undefined, {
    handlerModules: [PROVISIONING_CONTROL],
    inProcessJobs: true,
  })
  alice = await signUpUser(
    server,
    { email: 'alice@example.com', password: 'alice-password-1', name: 'Alice Liddell' },
    { bearer: true },
  )
  bob = await signUpUser(server, {
    email: 'bob@example.com',
    password: 'bob-password-12',
    name: 'Bob Builder',
  })
})
afterAll(() => server.stop())

/** Raw SQL on the server's store (`$1…$n`, valid on SQLite and PostgreSQL). */
const sql = (query: string, ...params: unknown[]) => server.core.store.query(query, params)
/** count(*) as a number: PostgreSQL's bigint count would reach JavaScript as a string. */
const countOf = async (query: string, ...params: unknown[]) =>
  (await sql(`SELECT CAST(count(*) AS INTEGER) AS n ${query}`, ...params))[0]!.n as number
const stateInDb = async (id: string) =>
  (await sql('SELECT state FROM workspaces WHERE id = $1', id))[0]?.state
const discovery = (authUrl: string) => fetch(`${authUrl}/.well-known/openid-configuration`)

/**
 * Creates a workspace for `user` and waits until it is active; its end users sign up and in at once
 * (no verified address needed).
 */
async function activeWorkspace(user: PlatformUser, name = 'Acme') {
  const created = await json(user.agent, 'POST', '/v1/workspaces', { name })
  expect(created.status).toBe(201)
  const active = (await waitForState(user.agent, created.body.id, 'active')) as {
    id: string
    auth_url: string
  }
  const policy = { require_email_verification: false }
  expect((await json(user.agent, 'PATCH', `/v1/workspaces/${active.id}/login-policy`, policy)).status).toBe(
    200,
  )
  return active
}

describe('POST /v1/workspaces', () => {
  it('answers 201 with a provisioning WorkspaceOut, then becomes active and serves discovery', async () => {
    const provisioning = holdProvisioning('Acme Corp')
    const created = await json(alice.agent, 'POST', '/v1/workspaces', { name: 'Acme Corp' })
    expect(created.status).toBe(201)
    const id = created.body.id as string
    expect(created.body).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Acme Corp',
      state: 'provisioning',
      plan: 'free',
      auth_url: `${server.baseUrl}/i/${id}`,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
      provisioning_error: null,
      data_plane_rps: null,
    })

    // While not active the instance does not serve.
    expect(await stateInDb(id)).toBe('provisioning')
    const early = await discovery(created.body.auth_url)
    expect(early.status).toBe(404)

    provisioning.release()
    const active = await waitForState(alice.agent, id, 'active')
    expect(active).toMatchObject({ id, name: 'Acme Corp', plan: 'free', provisioning_error: null })
    expect(active.created_at).toBe(created.body.created_at)
    const doc = await discovery(created.body.auth_url)
    expect(doc.status).toBe(200)
    expect(((await doc.json()) as { issuer: string }).issuer).toBe(created.body.auth_url)
  })

  it('accepts a 100-character name and refuses invalid payloads with 422', async () => {
    const ok = await json(alice.agent, 'POST', '/v1/workspaces', { name: 'n'.repeat(100) })
    expect(ok.status).toBe(201)
    expect(ok.body.name).toBe('n'.repeat(100))

    const cases: [string, unknown, (string | number)[], string?][] = [
      ['an empty name', { name: '' }, ['body', 'name'], 'string_too_short'],
      ['a 101-character name', { name: 'n'.repeat(101) }, ['body', 'name'], 'string_too_long'],
      ['a missing name', {}, ['body', 'name']],
      ['a non-string name', { name: 42 }, ['body', 'name']],
      ['malformed JSON', '{"name": "Refused"', ['body'], 'json_invalid'],
    ]
    for (const [what, body, loc, type] of cases) {
      const r = await json(alice.agent, 'POST', '/v1/workspaces', body)
      expect({ what, status: r.status }).toEqual({ what, status: 422 })
      const detail = r.body.detail as { loc: (string | number)[]; msg: string; type: string }[]
      expect(Array.isArray(detail)).toBe(true)
      expect({ what, loc: detail[0]!.loc }).toEqual({ what, loc })
      expect(typeof detail[0]!.msg).toBe('string')
      if (type) expect({ what, type: detail[0]!.type }).toEqual({ what, type })
    }
  })

  it('reports a missing name with the FastAPI type "missing"', async () => {
    const r = await json(alice.agent, 'POST', '/v1/workspaces', {})
    expect(r.status).toBe(422)
    expect(r.body.detail).toEqual([{ loc: ['body', 'name'], msg: expect.any(String), type: 'missing' }])
  })

  it('ignores unknown fields, as FastAPI models do: a client cannot set the plan', async () => {
    const r = await json(alice.agent, 'POST', '/v1/workspaces', { name: 'Extra', plan: 'enterprise' })
    expect(r.status).toBe(201)
    expect(r.body.plan).toBe('free')
    expect(await sql('SELECT plan FROM workspaces WHERE id = $1', r.body.id)).toEqual([{ plan: 'free' }])
  })

  it('refuses a whitespace-only name with 422 and stores nothing', async () => {
    const before = await countOf('FROM workspaces WHERE owner_id = $1', alice.id)
    const r = await json(alice.agent, 'POST', '/v1/workspaces', { name: '   ' })
    expect(r.status).toBe(422)
    expect(r.body.detail[0].loc).toEqual(['body', 'name'])
    expect(await countOf('FROM workspaces WHERE owner_id = $1', alice.id)).toBe(before)
  })
})

describe('GET /v1/workspaces', () => {
  it("lists only the caller's workspaces", async () => {
    const alices = await json(alice.agent, 'POST', '/v1/workspaces', { name: 'Alice Works' })
    expect(alices.status).toBe(201)
    const bobs = await json(bob.agent, 'POST', '/v1/workspaces', { name: 'Bob Works' })
    expect(bobs.status).toBe(201)
    const a = await json(alice.agent, 'GET', '/v1/workspaces')
    const b = await json(bob.agent, 'GET', '/v1/workspaces')
    expect(a.status).toBe(200)
    expect(b.status).toBe(200)
    expect(a.body.total).toBe(a.body.items.length)
    expect(b.body.total).toBe(b.body.items.length)
    const aliceIds = (a.body.items as { id: string }[]).map((w) => w.id)
    const bobIds = (b.body.items as { id: string }[]).map((w) => w.id)
    expect(aliceIds.length).toBeGreaterThan(0)
    expect(bobIds).toEqual([bobs.body.id])
    expect(aliceIds).not.toContain(bobs.body.id)
    const owned = (await sql('SELECT id FROM workspaces WHERE owner_id = $1', alice.id)).map((r) => r.id)
    expect([...aliceIds].sort()).toEqual([...(owned as string[])].sort())
  })
})

describe('PATCH /v1/workspaces/{id}', () => {
  it('renames with 200 and validates the name', async () => {
    const ws = await activeWorkspace(alice, 'Old Name')
    const r = await json(alice.agent, 'PATCH', `/v1/workspaces/${ws.id}`, { name: 'New Name' })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ id: ws.id, name: 'New Name', state: 'active' })
    expect((await json(alice.agent, 'GET', `/v1/workspaces/${ws.id}`)).body.name).toBe('New Name')

    for (const [body, loc] of [
      [{ name: '' }, ['body', 'name']],
      [{ name: 'n'.repeat(101) }, ['body', 'name']],
      [{ data_plane_rps: 0 }, ['body', 'data_plane_rps']],
      ['not json', ['body']],
    ] as [unknown, string[]][]) {
      const bad = await json(alice.agent, 'PATCH', `/v1/workspaces/${ws.id}`, body)
      expect(bad.status).toBe(422)
      expect(bad.body.detail[0].loc).toEqual(loc)
    }
    expect((await json(alice.agent, 'GET', `/v1/workspaces/${ws.id}`)).body.name).toBe('New Name')
    // Partial: an empty body changes nothing.
    const same = await json(alice.agent, 'PATCH', `/v1/workspaces/${ws.id}`, {})
    expect(same.status).toBe(200)
    expect(same.body).toMatchObject({ name: 'New Name', data_plane_rps: null })
  })

  it('ignores unknown fields on rename: the state cannot be set by a client', async () => {
    const ws = await activeWorkspace(alice, 'Keep Me')
    const r = await json(alice.agent, 'PATCH', `/v1/workspaces/${ws.id}`, {
      name: 'Renamed',
      state: 'deleting',
    })
    expect(r.status).toBe(200)
    expect(await sql('SELECT name, state FROM workspaces WHERE id = $1', ws.id)).toEqual([
      { name: 'Renamed', state: 'active' },
    ])
  })

  it('refuses to rename to a blank name', async () => {
    const ws = await activeWorkspace(alice, 'Not Blank')
    const r = await json(alice.agent, 'PATCH', `/v1/workspaces/${ws.id}`, { name: '  ' })
    expect(r.status).toBe(422)
    expect(await sql('SELECT name FROM workspaces WHERE id = $1', ws.id)).toEqual([{ name: 'Not Blank' }])
  })
})

describe('POST /v1/workspaces/{id}/retry-provisioning', () => {
  it('is a no-op on an active workspace (202, state unchanged)', async () => {
    const ws = await activeWorkspace(alice)
    const before = (await json(alice.agent, 'GET', `/v1/workspaces/${ws.id}`)).body
    const r = await json(alice.agent, 'POST', `/v1/workspaces/${ws.id}/retry-provisioning`)
    expect(r.status).toBe(202)
    expect(r.body).toEqual(before)
    expect(await stateInDb(ws.id)).toBe('active')
  })

  it('re-runs provisioning from provisioning_failed until active', async () => {
    const ws = await activeWorkspace(alice)
    const reason =
      'Could not create the signing keys. Retry provisioning; if it keeps failing, contact support.'
    await server.core.store.exec(
      "UPDATE workspaces SET state = 'provisioning_failed', provisioning_error = $1 WHERE id = $2",
      [reason, ws.id],
    )
    const failed = await json(alice.agent, 'GET', `/v1/workspaces/${ws.id}`)
    expect(failed.body).toMatchObject({ state: 'provisioning_failed', provisioning_error: reason })
    // A workspace that is not active serves no identity instance.
    expect((await discovery(ws.auth_url)).status).toBe(404)

    const r = await json(alice.agent, 'POST', `/v1/workspaces/${ws.id}/retry-provisioning`)
    expect(r.status).toBe(202)
    expect(r.body).toMatchObject({ id: ws.id, state: 'provisioning', provisioning_error: null })
    const active = await waitForState(alice.agent, ws.id, 'active')
    expect(active.provisioning_error).toBeNull()
    expect((await discovery(ws.auth_url)).status).toBe(200)
  })
})

describe('DELETE /v1/workspaces/{id}', () => {
  it('answers 202 deleting, stops the instance at once, then purges the workspace, its apps and accounts', async () => {
    const ws = await activeWorkspace(alice, 'Doomed')
    const app = await json(alice.agent, 'POST', `/v1/workspaces/${ws.id}/apps`, {
      name: 'Doomed SPA',
      app_type: 'spa',
      redirect_uris: [`${RP}/cb`],
    })
    expect(app.status).toBe(201)
    // An end user signs up on the instance, so it has an account (and OIDC session rows).
    const config = await oidc.discovery(new URL(ws.auth_url), app.body.client_id, undefined, oidc.None(), {
      execute: [oidc.allowInsecureRequests],
    })
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: `${RP}/cb`,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    })
    const back = await signUpEndUser(
      new Agent(server.baseUrl),
      url,
      { email: 'enduser@example.com', password: 'end-user-pass-1', name: 'End User' },
      `${RP}/cb`,
    )
    expect(back.searchParams.get('code')).toBeTruthy()
    // Apps are owned by `workspace_id`; identity rows by their instance (a workspace, or the platform).
    const count = (table: string) =>
      countOf(`FROM ${table} WHERE ${table === 'apps' ? 'workspace_id' : 'instance_id'} = $1`, ws.id)
    expect(await count('apps')).toBe(1)
    expect(await count('accounts')).toBe(1)
    // The end user's verification mail, kept in the dev outbox under the workspace.
    const outbox = () => countOf('FROM dev_outbox WHERE workspace_id = $1', ws.id)
    await eventually('the verification mail in the outbox', async () =>
      (await outbox()) > 0 ? true : undefined,
    )

    // A body, when sent, names the workspace exactly: without `confirm`, or with another name,
    // nothing happens (422).
    const empty = await json(alice.agent, 'DELETE', `/v1/workspaces/${ws.id}`, {})
    expect(empty.status).toBe(422)
    expect(empty.body.detail).toEqual([
      { loc: ['body', 'confirm'], msg: expect.any(String), type: 'missing' },
    ])
    for (const confirm of ['doomed', 'Doomed ', 'Acme']) {
      const wrong = await json(alice.agent, 'DELETE', `/v1/workspaces/${ws.id}`, { confirm })
      expect(wrong.status).toBe(422)
      expect(wrong.body).toEqual({
        detail: [
          {
            loc: ['body', 'confirm'],
            msg: "Type the workspace's exact name to confirm its deletion",
            type: 'confirm_mismatch',
          },
        ],
      })
    }
    expect(await stateInDb(ws.id)).toBe('active')
    expect((await discovery(ws.auth_url)).status).toBe(200)

    const del = await json(alice.agent, 'DELETE', `/v1/workspaces/${ws.id}`, { confirm: 'Doomed' })
    expect(del.status).toBe(202)
    expect(del.body).toEqual({ id: ws.id, state: 'deleting' })
    // The instance stops serving at once, before the purge.
    expect((await discovery(ws.auth_url)).status).toBe(404)

    await eventually('the workspace to be purged', async () =>
      (await json(alice.agent, 'GET', `/v1/workspaces/${ws.id}`)).status === 404 ? true : undefined,
    )
    expect((await discovery(ws.auth_url)).status).toBe(404)
    expect(await sql('SELECT id FROM workspaces WHERE id = $1', ws.id)).toEqual([])
    expect(await count('apps')).toBe(0)
    expect(await count('accounts')).toBe(0)
    expect(await count('oidc_payloads')).toBe(0)
    expect(await count('instance_keys')).toBe(0)
    expect(await outbox()).toBe(0)
    const list = await json(alice.agent, 'GET', '/v1/workspaces')
    expect((list.body.items as { id: string }[]).map((w) => w.id)).not.toContain(ws.id)
    expect((await json(alice.agent, 'DELETE', `/v1/workspaces/${ws.id}`, { confirm: 'Doomed' })).status).toBe(
      404,
    )
  })
})

describe('DELETE /v1/workspaces/{id} and its confirmation', () => {
  it('takes no body from a person (SPEC: request none): 202 deleting', async () => {
    const ws = (await json(alice.agent, 'POST', '/v1/workspaces', { name: 'Bodiless' })).body.id
    // A body that is sent is a confirmation, checked even when it is no object at all or does not parse.
    for (const body of ['"Bodiless"', 'null', '{"confirm": ']) {
      const odd = await json(alice.agent, 'DELETE', `/v1/workspaces/${ws}`, body)
      expect({ body, status: odd.status }).toEqual({ body, status: 422 })
    }
    expect(await stateInDb(ws)).not.toBe('deleting')
    const del = await json(alice.agent, 'DELETE', `/v1/workspaces/${ws}`)
    expect(del.status).toBe(202)
    expect(del.body).toEqual({ id: ws, state: 'deleting' })
  })

  it("takes the workspace's exact name from a machine key (SPEC: workspace:admin deletes with confirmation)", async () => {
    const ws = (await json(alice.agent, 'POST', '/v1/workspaces', { name: 'Keyed' })).body.id
    const key = await keyCaller(server.core, ws, ['workspace:admin'])
    const none = await callApi(server.baseUrl, key, 'DELETE', `/v1/workspaces/${ws}`)
    const msg = 'A machine key deletes a workspace only with its exact name: {"confirm": "<name>"}'
    expect([none.status, none.body.detail]).toEqual([
      422,
      [{ loc: ['body', 'confirm'], msg, type: 'confirm_required' }],
    ])
    const wrong = await callApi(server.baseUrl, key, 'DELETE', `/v1/workspaces/${ws}`, { confirm: 'keyed' })
    expect(wrong.status).toBe(422)
    expect(wrong.body.detail[0]).toMatchObject({ loc: ['body', 'confirm'], type: 'confirm_mismatch' })
    expect(await stateInDb(ws)).not.toBe('deleting')
    const done = await callApi(server.baseUrl, key, 'DELETE', `/v1/workspaces/${ws}`, { confirm: 'Keyed' })
    expect(done.status).toBe(202)
    expect(done.body).toEqual({ id: ws, state: 'deleting' })
  })
})

describe('isolation and authentication', () => {
  let ws: { id: string; auth_url: string }
  let appId: string
  let bobWs: string

  beforeAll(async () => {
    bobWs = (await json(bob.agent, 'POST', '/v1/workspaces', { name: 'Bob Own' })).body.id
    ws = await activeWorkspace(alice, 'Alice Private')
    const app = await json(alice.agent, 'POST', `/v1/workspaces/${ws.id}/apps`, {
      name: 'Private App',
      redirect_uris: [`${RP}/cb`],
    })
    expect(app.status).toBe(201)
    appId = app.body.id
  })

  it('answers 404 (never 403) to another user on every route of a workspace they do not own', async () => {
    const before = (await json(alice.agent, 'GET', `/v1/workspaces/${ws.id}`)).body
    const calls: [string, string, unknown?][] = [
      ['GET', `/v1/workspaces/${ws.id}`],
      ['PATCH', `/v1/workspaces/${ws.id}`, { name: 'Hijacked' }],
      ['POST', `/v1/workspaces/${ws.id}/retry-provisioning`],
      ['GET', `/v1/workspaces/${ws.id}/apps`],
      ['POST', `/v1/workspaces/${ws.id}/apps`, { name: 'Rogue', redirect_uris: [`${RP}/rogue`] }],
      ['DELETE', `/v1/workspaces/${ws.id}/apps/${appId}`],
      ['DELETE', `/v1/workspaces/${ws.id}`],
    ]
    const unknown = crypto.randomUUID()
    for (const [method, path, body] of calls) {
      const r = await json(bob.agent, method, path, body)
      expect({ method, path, status: r.status }).toEqual({ method, path, status: 404 })
      expect(r.body).toEqual({ detail: 'Workspace not found' })
      // Indistinguishable from a workspace that does not exist.
      const none = await json(bob.agent, method, path.replace(ws.id, unknown), body)
      expect({ method, path, status: none.status, body: none.body }).toEqual({
        method,
        path,
        status: 404,
        body: r.body,
      })
    }
    // The same with a bearer token: Alice's works on hers, not on Bob's.
    const viaBearer = await fetch(`${server.baseUrl}/v1/workspaces/${ws.id}`, {
      headers: { authorization: `Bearer ${alice.bearer}` },
    })
    expect(viaBearer.status).toBe(200)
    const bobBearer = await fetch(`${server.baseUrl}/v1/workspaces/${bobWs}`, {
      headers: { authorization: `Bearer ${alice.bearer}` },
    })
    expect(bobBearer.status).toBe(404)

    const after = await json(alice.agent, 'GET', `/v1/workspaces/${ws.id}`)
    expect(after.body).toEqual(before)
    const apps = await json(alice.agent, 'GET', `/v1/workspaces/${ws.id}/apps`)
    expect(apps.body.total).toBe(1)
    expect(apps.body.items[0]).toMatchObject({ id: appId, name: 'Private App' })
    expect((await discovery(ws.auth_url)).status).toBe(200)
  })

  it('answers 401 with WWW-Authenticate without credentials', async () => {
    for (const [method, path] of [
      ['GET', '/v1/workspaces'],
      ['POST', '/v1/workspaces'],
      ['GET', `/v1/workspaces/${ws.id}`],
      ['PATCH', `/v1/workspaces/${ws.id}`],
      ['DELETE', `/v1/workspaces/${ws.id}`],
      ['POST', `/v1/workspaces/${ws.id}/retry-provisioning`],
      ['GET', `/v1/workspaces/${ws.id}/apps`],
      ['POST', `/v1/workspaces/${ws.id}/apps`],
      ['DELETE', `/v1/workspaces/${ws.id}/apps/${appId}`],
    ] as const) {
      const hasBody = method === 'POST' || method === 'PATCH'
      const body =
        path.endsWith('/apps') && hasBody
          ? { name: 'Anon', redirect_uris: [`${RP}/cb`] }
          : hasBody && !path.endsWith('retry-provisioning')
            ? { name: 'Anon' }
            : undefined
      const res = await fetch(`${server.baseUrl}${path}`, {
        method,
        headers: body ? { 'content-type': 'application/json' } : {},
        body: body ? JSON.stringify(body) : undefined,
      })
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 401 })
      expect(res.headers.get('www-authenticate')).toStartWith('Bearer')
      expect(await res.json()).toEqual({ detail: 'Not authenticated' })
    }
    expect(await stateInDb(ws.id)).toBe('active')
  })

  it('refuses a session-cookie mutation without a valid CSRF token (403), and a bearer needs none', async () => {
    const noHeader = await alice.agent.request('/v1/workspaces', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'No CSRF' }),
    })
    expect(noHeader.status).toBe(403)
    const wrong = await json(
      alice.agent,
      'POST',
      '/v1/workspaces',
      { name: 'Wrong CSRF' },
      { 'x-csrf-token': 'nope' },
    )
    expect(wrong.status).toBe(403)
    const crossSite = await json(
      alice.agent,
      'PATCH',
      `/v1/workspaces/${ws.id}`,
      { name: 'Cross Site' },
      { origin: 'https://evil.example' },
    )
    expect(crossSite.status).toBe(403)
    const del = await alice.agent.request(`/v1/workspaces/${ws.id}`, { method: 'DELETE' })
    expect(del.status).toBe(403)
    const noCsrfNames = await sql(
      "SELECT name FROM workspaces WHERE owner_id = $1 AND name IN ('No CSRF', 'Wrong CSRF', 'Cross Site')",
      alice.id,
    )
    expect(noCsrfNames).toEqual([])
    expect(await stateInDb(ws.id)).toBe('active')

    const viaBearer = await fetch(`${server.baseUrl}/v1/workspaces`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.bearer}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Via Bearer' }),
    })
    expect(viaBearer.status).toBe(201)
    expect(
      await sql(
        'SELECT owner_id FROM workspaces WHERE id = $1',
        ((await viaBearer.json()) as { id: string }).id,
      ),
    ).toEqual([{ owner_id: alice.id }])
  })

  it("answers 422 at ['path', 'workspace_id'] for an id that is not a uuid, before the workspace or the body is looked at", async () => {
    for (const [method, path, body] of [
      ['GET', '/v1/workspaces/not-a-uuid'],
      ['PATCH', '/v1/workspaces/123', { name: 7 }],
      ['DELETE', '/v1/workspaces/platform'],
      ['POST', '/v1/workspaces/xyz/retry-provisioning'],
      ['GET', '/v1/workspaces/not-a-uuid/apps'],
      ['DELETE', '/v1/workspaces/not-a-uuid/apps/app_1'],
    ] as [string, string, unknown?][]) {
      const r = await json(alice.agent, method, path, body)
      expect({ method, path, status: r.status }).toEqual({ method, path, status: 422 })
      expect(r.body).toEqual({
        detail: [
          {
            loc: ['path', 'workspace_id'],
            msg: "Expected string to match 'uuid' format",
            type: 'value_error',
          },
        ],
      })
    }
  })
})
