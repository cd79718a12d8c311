import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Elysia } from 'elysia'
import { authPlugin } from '../src/access/guard'
import type { Principal } from '../src/access/model'
import type { WorkspaceScope } from '../src/access/scopes'
import { loginPolicyRoutes } from '../src/features/login-policy/routes'
import { createLoginPolicyService, loginPolicyOf } from '../src/features/login-policy/service'
import type { Workspace } from '../src/features/workspaces/service'
import { DEFAULT_LOGIN_POLICY } from '../src/identity'
import { errorsPlugin } from '../src/shared/plugins/errors'
import { TEST_ACTOR, testCore } from './support/core'
import { startTestServer, type TestServer } from './support/server'
import { json, type PlatformUser, signUpUser, waitForState } from './support/users'

let server: TestServer
let alice: PlatformUser
let bob: PlatformUser
let ws: string

/** DESIGN "Login policy": LoginPolicyView's defaults. */
const DEFAULTS = {
  allow_password: true,
  allow_registration: true,
  allow_external_idps: true,
  require_email_verification: true,
  mfa: 'off',
  password_min_length: 8,
  lockout_threshold: 5,
  lockout_minutes: 15,
  session_lifetime_hours: 168,
}

const sql = (query: string, ...params: unknown[]) => server.core.store.query(query, params)
const path = (id = ws) => `/v1/workspaces/${id}/login-policy`

beforeAll(async () => {
  server = await startTestServer({}, undefined, { inProcessJobs: true })
  alice = await signUpUser(
    server,
    { email: 'alice@example.com', password: 'alice-password-1', name: 'Alice' },
    { bearer: true },
  )
  bob = await signUpUser(server, { email: 'bob@example.com', password: 'bob-password-12', name: 'Bob' })
  const created = await json(alice.agent, 'POST', '/v1/workspaces', { name: 'Policy Inc' })
  expect(created.status).toBe(201)
  ws = String((await waitForState(alice.agent, created.body.id, 'active')).id)
})
afterAll(() => server.stop())

describe('GET /v1/workspaces/{id}/login-policy', () => {
  it("answers DESIGN's defaults for a new workspace, whose policy provisioning created", async () => {
    const got = await json(alice.agent, 'GET', path())
    expect(got.status).toBe(200)
    expect(got.body).toEqual(DEFAULTS)
    const rows = await sql('SELECT workspace_id, mfa FROM login_policies WHERE workspace_id = $1', ws)
    expect(rows).toEqual([{ workspace_id: ws, mfa: 'off' }])
  })

  it('answers the defaults for a workspace without a policy row (the identity plane too)', async () => {
    const id = crypto.randomUUID()
    await server.core.store.exec(
      "INSERT INTO workspaces (id, name, owner_id, state, plan, created_at, updated_at) VALUES ($1, 'Bare', $2, 'active', 'free', 0, 0)",
      [id, alice.id],
    )
    await server.core.store.exec(
      "INSERT INTO workspace_members (workspace_id, account_id, role, created_at, updated_at) VALUES ($1, $2, 'owner', 0, 0)",
      [id, alice.id],
    )
    expect((await json(alice.agent, 'GET', path(id))).body).toEqual(DEFAULTS)
    expect(await loginPolicyOf(server.core)(id)).toEqual({ ...DEFAULT_LOGIN_POLICY })
  })
})

describe('PATCH /v1/workspaces/{id}/login-policy', () => {
  it('changes the fields given and keeps every omitted one', async () => {
    const first = await json(alice.agent, 'PATCH', path(), {
      allow_registration: false,
      lockout_threshold: 3,
    })
    expect(first.status).toBe(200)
    expect(first.body).toEqual({ ...DEFAULTS, allow_registration: false, lockout_threshold: 3 })
    const second = await json(alice.agent, 'PATCH', path(), { mfa: 'optional', password_min_length: 12 })
    expect(second.body).toEqual({
      ...DEFAULTS,
      allow_registration: false,
      lockout_threshold: 3,
      mfa: 'optional',
      password_min_length: 12,
    })
    const empty = await json(alice.agent, 'PATCH', path(), {})
    expect(empty.status).toBe(200)
    expect(empty.body).toEqual(second.body)
    expect((await json(alice.agent, 'GET', path())).body).toEqual(second.body)
    // The identity plane reads the same policy.
    expect(await loginPolicyOf(server.core)(ws)).toMatchObject({
      allowRegistration: false,
      lockoutThreshold: 3,
      mfa: 'optional',
      passwordMinLength: 12,
    })
    expect((await json(alice.agent, 'PATCH', path(), DEFAULTS)).body).toEqual(DEFAULTS)
  })

  it('accepts the bounds of every range', async () => {
    const bounds = {
      password_min_length: 128,
      lockout_threshold: 0,
      lockout_minutes: 1440,
      session_lifetime_hours: 8760,
    }
    expect((await json(alice.agent, 'PATCH', path(), bounds)).body).toEqual({ ...DEFAULTS, ...bounds })
    const low = {
      password_min_length: 8,
      lockout_threshold: 100,
      lockout_minutes: 1,
      session_lifetime_hours: 1,
    }
    expect((await json(alice.agent, 'PATCH', path(), low)).body).toEqual({ ...DEFAULTS, ...low })
    expect((await json(alice.agent, 'PATCH', path(), DEFAULTS)).status).toBe(200)
  })

  it('answers 422 with one entry per field that breaks its rule, and changes nothing', async () => {
    const bad = await json(alice.agent, 'PATCH', path(), {
      allow_password: 'yes',
      mfa: 'sometimes',
      password_min_length: 7,
      lockout_threshold: 101,
      lockout_minutes: 0,
      session_lifetime_hours: 8761,
    })
    expect(bad.status).toBe(422)
    const byField = Object.fromEntries(
      (bad.body.detail as { loc: string[]; type: string }[]).map((d) => [d.loc.join('.'), d.type]),
    )
    expect(byField).toEqual({
      'body.allow_password': 'bool_type',
      'body.mfa': 'union_tag_invalid',
      'body.password_min_length': 'greater_than_equal',
      'body.lockout_threshold': 'less_than_equal',
      'body.lockout_minutes': 'greater_than_equal',
      'body.session_lifetime_hours': 'less_than_equal',
    })
    expect(bad.body.detail).toHaveLength(6)
    for (const d of bad.body.detail as { msg: unknown }[]) expect(d.msg).toBeString()
    // A number only: a string of digits is not one.
    const text = await json(alice.agent, 'PATCH', path(), { password_min_length: '12' })
    expect(text.status).toBe(422)
    expect(text.body.detail).toMatchObject([{ loc: ['body', 'password_min_length'], type: 'int_type' }])
    const fractional = await json(alice.agent, 'PATCH', path(), { lockout_minutes: 1.5 })
    expect(fractional.status).toBe(422)
    expect(fractional.body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([
      ['body', 'lockout_minutes'],
    ])
    // A field the model does not know is dropped (as FastAPI ignores extra fields): nothing changes.
    const unknown = await json(alice.agent, 'PATCH', path(), { allow_passwords: false })
    expect(unknown.status).toBe(200)
    expect(unknown.body).toEqual(DEFAULTS)
    expect((await json(alice.agent, 'GET', path())).body).toEqual(DEFAULTS)
  })

  it('works with a bearer token, refuses a session call without CSRF (403) and an anonymous one (401)', async () => {
    const viaBearer = await fetch(`${server.baseUrl}${path()}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${alice.bearer}`, 'content-type': 'application/json' },
      body: JSON.stringify({ lockout_minutes: 30 }),
    })
    expect(viaBearer.status).toBe(200)
    expect(((await viaBearer.json()) as { lockout_minutes: number }).lockout_minutes).toBe(30)
    const noCsrf = await alice.agent.request(path(), {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ lockout_minutes: 45 }),
    })
    expect(noCsrf.status).toBe(403)
    expect((await fetch(`${server.baseUrl}${path()}`)).status).toBe(401)
    expect((await json(alice.agent, 'GET', path())).body.lockout_minutes).toBe(30)
    expect((await json(alice.agent, 'PATCH', path(), { lockout_minutes: 15 })).status).toBe(200)
  })

  it("answers 404 (never 403) to GET and PATCH on another user's workspace, and changes nothing", async () => {
    for (const [method, body] of [['GET'], ['PATCH', { allow_registration: false }]] as const) {
      const r = await json(bob.agent, method, path(), body)
      expect({ method, status: r.status, body: r.body }).toEqual({
        method,
        status: 404,
        body: { detail: 'Workspace not found' },
      })
    }
    expect((await json(alice.agent, 'GET', path())).body).toEqual(DEFAULTS)
  })
})

describe('the workspace lifecycle', () => {
  it('removes the policy with the workspace (its teardown step)', async () => {
    const created = await json(alice.agent, 'POST', '/v1/workspaces', { name: 'Short Lived' })
    const id = String((await waitForState(alice.agent, created.body.id, 'active')).id)
    expect(await sql('SELECT workspace_id FROM login_policies WHERE workspace_id = $1', id)).toHaveLength(1)
    expect(
      (await json(alice.agent, 'DELETE', `/v1/workspaces/${id}`, { confirm: 'Short Lived' })).status,
    ).toBe(202)
    const deadline = Date.now() + 15_000
    while ((await sql('SELECT id FROM workspaces WHERE id = $1', id)).length > 0 && Date.now() < deadline)
      await Bun.sleep(50)
    expect(await sql('SELECT id FROM workspaces WHERE id = $1', id)).toEqual([])
    expect(await sql('SELECT workspace_id FROM login_policies WHERE workspace_id = $1', id)).toEqual([])
  })

  it('refuses a change to a workspace being deleted (409)', async () => {
    const core = server.core
    const service = createLoginPolicyService(core)
    const deleting = { id: crypto.randomUUID(), state: 'deleting' } as Workspace
    await expect(service.update(deleting, TEST_ACTOR, { allow_password: false })).rejects.toMatchObject({
      status: 409,
    })
  })
})

describe('the migration', () => {
  it('gives every workspace that existed before it the defaults (the data statement of this dialect)', async () => {
    const core = await testCore()
    const dir = join(import.meta.dir, '..', 'db', 'migrations', core.store.dialect)
    const statement = readdirSync(dir)
      .filter((f) => f.endsWith('.sql'))
      .flatMap((f) => readFileSync(join(dir, f), 'utf8').split('--> statement-breakpoint'))
      .find((s) => /INSERT INTO\s+["`]login_policies["`]/.test(s))
    expect(statement).toBeString()
    const [old, gone] = [crypto.randomUUID(), crypto.randomUUID()]
    for (const [id, state] of [
      [old, 'active'],
      [gone, 'deleting'],
    ]) {
      await core.store.exec(
        "INSERT INTO workspaces (id, name, owner_id, state, plan, created_at, updated_at) VALUES ($1, 'Old', 'usr_x', $2, 'free', 0, 0)",
        [id, state],
      )
    }
    await core.store.exec(statement!)
    expect(await loginPolicyOf(core)(old)).toEqual({ ...DEFAULT_LOGIN_POLICY })
    const rows = await core.store.query('SELECT workspace_id FROM login_policies')
    expect(rows).toEqual([{ workspace_id: old }])
    await core.store.close()
  })
})

describe('scopes', () => {
  // The only principals today (owners) hold workspace:admin; a principal of each scope shows what
  // each route asks for: reading needs workspace:read, changing (security settings) workspace:admin.
  it('lets workspace:read read; workspace:write not change; workspace:admin change', async () => {
    const core = await testCore()
    const workspace = {
      id: crypto.randomUUID(),
      name: 'Scoped',
      ownerId: 'usr_x',
      state: 'active',
      plan: 'free',
      provisioningError: null,
      provisioningStep: null,
      createdAt: 0,
      updatedAt: 0,
    } as Workspace
    // A key holding the scope of the x-scope header: the guard reads its scopes from the principal.
    const principal = (scope: WorkspaceScope): Principal => ({
      kind: 'key',
      id: 'key:mk_x',
      key: { id: 'mk_x', workspaceId: workspace.id, scopes: [scope] },
      via: 'bearer',
    })
    const auth = authPlugin<Workspace>({
      resolvers: [({ request }) => principal(request.headers.get('x-scope') as WorkspaceScope)],
      findAccess: async (id, p) =>
        id === workspace.id && p.kind === 'key' ? { workspace, scopes: p.key.scopes } : undefined,
      clientIp: () => null,
    })
    const app = new Elysia().use(errorsPlugin(core.log)).use(loginPolicyRoutes(core, auth))
    const call = (scope: WorkspaceScope, method: string, body?: unknown) =>
      app.handle(
        new Request(`http://localhost${path(workspace.id)}`, {
          method,
          headers: { 'x-scope': scope, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        }),
      )
    expect((await call('workspace:read', 'GET')).status).toBe(200)
    for (const scope of ['workspace:read', 'workspace:write'] as const) {
      const refused = await call(scope, 'PATCH', { allow_registration: false })
      expect(refused.status).toBe(403)
      expect(await refused.json()).toEqual({ detail: 'This action needs the workspace:admin scope' })
    }
    const changed = await call('workspace:admin', 'PATCH', { allow_registration: false })
    expect(changed.status).toBe(200)
    expect(((await changed.json()) as { allow_registration: boolean }).allow_registration).toBe(false)
    await core.store.close()
  })
})
