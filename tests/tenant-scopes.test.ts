import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { decodeJwt } from 'jose'
import * as oidc from 'openid-client'
import type { App } from '../src/app'
import { auditLog } from '../src/audit/schema'
import type { Core } from '../src/core'
import { signUp } from '../src/identity'
import { markEmailVerified } from '../src/identity/accounts'
import { testApp } from './support/app'
import { Agent } from './support/browserless'
import { type Caller, callApi, credentials, keyCaller, type Person, person } from './support/callers'
import { activeWorkspace, pkceAuthorization, publicClient } from './support/instances'
import { pathOf, routeKey, routeTable, type TableRoute } from './support/route-table'
import { startTestServer, type TestServer } from './support/server'
import { type SmtpSink, startSmtpServer } from './support/smtp'
import { signUpEndUser } from './support/users'

// Issue 26, item 2: tenant scopes (SPEC "Machine-key scopes", DESIGN "Tenants"), as a matrix
// generated from the app's route table like tests/scope-matrix.test.ts: a `tenant:acme:read` key
// reads acme and its members and nothing else, a `tenant:acme:write` key also edits acme and its
// members; both get 404 for another tenant (beta) and 403 on every other route of the workspace.
// Then the `tenants` claim of ID tokens and userinfo, through a real OIDC flow.

const RP = 'https://rp.example.com'
const atRp = (u: URL) => u.href.startsWith(RP)
const PASSWORD = 'a long password 1'

let app: App
let core: Core
/** A real server for the flows (mails through `smtp`, OIDC sign-ins). */
let server: TestServer
let smtp: SmtpSink
let routes: TableRoute[]
let ws: string
let owner: Person
let acme: { id: string; slug: string }
let beta: { id: string; slug: string }
/** Members of acme and of beta, for the read routes; a user of neither, whom the write routes add. */
const users = { acme: '', beta: '', joining: '' }
const keys: Record<string, Caller> = {}

const api = (r: TableRoute) => r.path.startsWith('/v1/')
const onWorkspace = (r: TableRoute) => r.path.includes(':workspace_id')

/** What the write routes send: one valid body per route with a body; a new one fails until it is added here. */
const BODIES: Record<string, () => unknown> = {
  'PATCH /v1/workspaces/:workspace_id/tenants/:tenant_id': () => ({ name: `Renamed ${crypto.randomUUID()}` }),
  'POST /v1/workspaces/:workspace_id/tenants/:tenant_id/members/': () => ({ user_id: users.joining }),
  'POST /v1/workspaces/:workspace_id/tenants/:tenant_id/members/invite': () => ({
    email: `invited-${crypto.randomUUID()}@example.com`,
  }),
}

async function send(r: TableRoute, who: Caller, tenant?: { id: string }, user?: string) {
  const path = pathOf(r, ws, { tenant_id: tenant?.id ?? 'ten_none', user_id: user ?? 'usr_none' })
  const body = BODIES[routeKey(r)]?.()
  const headers: Record<string, string> = { accept: 'application/json', ...credentials(who) }
  if (body !== undefined) headers['content-type'] = 'application/json'
  const res = await app.handle(
    new Request(`http://localhost:8080${path}`, {
      method: r.method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  )
  return {
    status: res.status,
    body: res.headers.get('content-type')?.includes('json') ? await res.json() : null,
  }
}

beforeAll(async () => {
  smtp = await startSmtpServer()
  server = await startTestServer({ SMTP_URL: smtp.url })
})
afterAll(async () => {
  await server.stop()
  await smtp.close()
})

beforeAll(async () => {
  const built = await testApp()
  app = built.app
  core = built.core
  owner = await person(core)
  ws = await activeWorkspace(core, owner.id)
  const asOwner = (method: string, path: string, body?: unknown) =>
    app.handle(
      new Request(`http://localhost:8080${path}`, {
        method,
        headers: { accept: 'application/json', 'content-type': 'application/json', ...credentials(owner) },
        body: JSON.stringify(body),
      }),
    )
  const tenant = async (slug: string) =>
    (await asOwner('POST', `/v1/workspaces/${ws}/tenants`, { slug, name: slug })).json()
  acme = (await tenant('acme')) as typeof acme
  beta = (await tenant('beta')) as typeof beta
  const user = async (email: string) => (await signUp(core, ws, { email, password: 'a long password 1' })).id
  users.acme = await user('in-acme@example.com')
  users.beta = await user('in-beta@example.com')
  users.joining = await user('joining@example.com')
  for (const [t, u] of [
    [acme, users.acme],
    [beta, users.beta],
  ] as const) {
    const res = await asOwner('POST', `/v1/workspaces/${ws}/tenants/${t.id}/members`, { user_id: u })
    expect(res.status).toBe(201)
  }
  keys.read = await keyCaller(core, ws, ['tenant:acme:read'])
  keys.write = await keyCaller(core, ws, ['tenant:acme:write'])
  keys.mixed = await keyCaller(core, ws, ['tenant:acme:read', 'tenant:beta:write'])
  routes = routeTable(app)
})

/** The JSON routes where tenant scopes count, by the level they need. */
const tenantRoutes = (level?: 'read' | 'write') =>
  routes.filter((r) => api(r) && r.tenant !== undefined && (!level || r.tenant === level))
/** The workspace's other JSON routes: a tenant scope is refused on every one. */
const otherRoutes = () => routes.filter((r) => api(r) && onWorkspace(r) && r.tenant === undefined)
/** A route on one tenant (the list names none). */
const onTenant = (r: TableRoute) => r.path.includes(':tenant_id')
/** `POST …/tenants/:tenant_id/members`: what a tenant key may send it is checked below, on its own. */
const addMember = () =>
  tenantRoutes('write').find((r) => r.method === 'POST' && r.path.endsWith('/members/'))!

/** Every route of `rs` whose answer to `who` on `tenant` is not `expected`, as `METHOD path: status`. */
async function mismatches(
  rs: TableRoute[],
  who: Caller,
  tenant: { id: string } | undefined,
  expected: number,
) {
  const wrong: string[] = []
  for (const r of rs) {
    const user = tenant === acme ? (r.tenant === 'write' ? users.joining : users.acme) : users.beta
    const { status } = await send(r, who, tenant, user)
    if (status !== expected && !(expected === 200 && (status === 201 || status === 202)))
      wrong.push(`${routeKey(r)}: ${status}, expected ${expected}`)
  }
  return wrong
}

describe('the route table', () => {
  it("marks the routes of a tenant and of its members as tenant routes, and creating, deleting and the batch as the workspace's", () => {
    expect(tenantRoutes('read').map(routeKey).sort()).toEqual([
      'GET /v1/workspaces/:workspace_id/tenants/',
      'GET /v1/workspaces/:workspace_id/tenants/:tenant_id',
      'GET /v1/workspaces/:workspace_id/tenants/:tenant_id/members/',
      'GET /v1/workspaces/:workspace_id/tenants/:tenant_id/members/:user_id',
    ])
    expect(tenantRoutes('write').map(routeKey).sort()).toEqual([
      'DELETE /v1/workspaces/:workspace_id/tenants/:tenant_id/members/:user_id',
      'PATCH /v1/workspaces/:workspace_id/tenants/:tenant_id',
      'POST /v1/workspaces/:workspace_id/tenants/:tenant_id/members/',
      'POST /v1/workspaces/:workspace_id/tenants/:tenant_id/members/invite',
    ])
    const others = otherRoutes().map(routeKey)
    expect(others).toContain('POST /v1/workspaces/:workspace_id/tenants/')
    expect(others).toContain('DELETE /v1/workspaces/:workspace_id/tenants/:tenant_id')
    expect(others).toContain('POST /v1/workspaces/:workspace_id/tenants:batch')
    expect(others.length).toBeGreaterThan(20)
  })
})

describe('a tenant:acme:read key', () => {
  it('reads acme and its members on every tenant read route', async () => {
    expect(await mismatches(tenantRoutes('read'), keys.read!, acme, 200)).toEqual([])
  })

  it('gets 404 for beta on every route of one tenant, and a list of acme alone', async () => {
    expect(await mismatches(tenantRoutes('read').filter(onTenant), keys.read!, beta, 404)).toEqual([])
    const list = await send(tenantRoutes('read').find((r) => !onTenant(r))!, keys.read!)
    expect(list.body.items.map((t: { slug: string }) => t.slug)).toEqual(['acme'])
    expect(list.body.total).toBe(1)
  })

  it('gets 403 on every write of acme (and of beta), naming the scopes that would do', async () => {
    expect(await mismatches(tenantRoutes('write'), keys.read!, acme, 403)).toEqual([])
    expect(await mismatches(tenantRoutes('write'), keys.read!, beta, 403)).toEqual([])
    const patch = tenantRoutes('write').find((r) => r.method === 'PATCH')!
    expect((await send(patch, keys.read!, acme)).body).toEqual({
      detail: 'This action needs the workspace:write scope or a tenant:<slug>:write scope',
    })
  })

  it('gets 403 on every other route of the workspace', async () => {
    expect(await mismatches(otherRoutes(), keys.read!, acme, 403)).toEqual([])
  })
})

describe('a tenant:acme:write key', () => {
  it('reads acme, edits it, removes its members and invites new ones by email', async () => {
    expect(await mismatches(tenantRoutes('read'), keys.write!, acme, 200)).toEqual([])
    expect(
      await mismatches(
        tenantRoutes('write').filter((r) => r !== addMember()),
        keys.write!,
        acme,
        200,
      ),
    ).toEqual([])
  })

  it('gets 404 for beta on every route of one tenant, reading or writing', async () => {
    expect(await mismatches(tenantRoutes().filter(onTenant), keys.write!, beta, 404)).toEqual([])
  })

  it('gets 403 on every other route of the workspace: creating, deleting and batches of tenants included', async () => {
    expect(await mismatches(otherRoutes(), keys.write!, acme, 403)).toEqual([])
  })
})

// Issue 56, item 3 (DESIGN "Decisions of 2026-12-05"): a tenant key sees and changes its tenant and
// its members only, so it may not name any other user of the workspace; workspace:write still may.
describe('adding a member to acme', () => {
  const add = (who: Caller, body: unknown) =>
    app.handle(
      new Request(`http://localhost:8080/v1/workspaces/${ws}/tenants/${acme.id}/members`, {
        method: 'POST',
        headers: { accept: 'application/json', 'content-type': 'application/json', ...credentials(who) },
        body: JSON.stringify(body),
      }),
    )
  const answer = async (res: Response) => ({ status: res.status, body: await res.json() })

  it('is refused to a tenant key for a user of the workspace outside acme, as for an id no user has', async () => {
    const nobody = 'usr_01JNOBODYNOBODYNOBODYNOBOD'
    const refused = {
      status: 403,
      body: {
        detail:
          'Adding a user who is not a member of the tenant needs the workspace:write scope; invite them by email instead',
      },
    }
    for (const user of [users.joining, users.beta, nobody])
      expect(await answer(await add(keys.write!, { user_id: user }))).toEqual(refused)
    // Nothing was added: acme's members are as before.
    const members = await send(tenantRoutes('read').find((r) => r.path.endsWith('/members/'))!, owner, acme)
    expect(members.body.items.map((m: { user_id: string }) => m.user_id)).not.toContain(users.joining)
    expect(members.body.items.map((m: { user_id: string }) => m.user_id)).not.toContain(users.beta)
  })

  it("answers a tenant key's read and removal of a non-member the same whether the workspace has that user or not", async () => {
    const nobody = 'usr_01JNOBODYNOBODYNOBODYNOBOD'
    const same = async (r: TableRoute) => {
      const [user, none] = [
        await send(r, keys.write!, acme, users.beta),
        await send(r, keys.write!, acme, nobody),
      ]
      expect(user).toEqual(none)
      return user.status
    }
    expect(await same(tenantRoutes('read').find((r) => r.path.endsWith(':user_id'))!)).toBe(404)
    expect(await same(tenantRoutes('write').find((r) => r.method === 'DELETE')!)).toBe(200)
    // Removing from acme left the user's membership of beta alone.
    expect(
      (await send(tenantRoutes('read').find((r) => r.path.endsWith(':user_id'))!, owner, beta, users.beta))
        .status,
    ).toBe(200)
  })

  it('answers 409 to a tenant key for a member of acme, whom it already sees', async () => {
    expect((await add(keys.write!, { user_id: users.acme })).status).toBe(409)
  })

  it('adds any user of the workspace for a workspace:write key, naming them', async () => {
    const workspaceKey = await keyCaller(core, ws, ['workspace:write'])
    const added = await answer(await add(workspaceKey, { user_id: users.beta }))
    expect(added.status).toBe(201)
    expect(added.body).toMatchObject({ user_id: users.beta, email: 'in-beta@example.com' })
    const gone = await send(
      tenantRoutes('write').find((r) => r.method === 'DELETE')!,
      owner,
      acme,
      users.beta,
    )
    expect(gone.status).toBe(200)
  })
})

describe('a key with tenant:acme:read and tenant:beta:write', () => {
  it('reads both, lists both, and writes beta only', async () => {
    expect(await mismatches(tenantRoutes('read').filter(onTenant), keys.mixed!, acme, 200)).toEqual([])
    expect(await mismatches(tenantRoutes('read').filter(onTenant), keys.mixed!, beta, 200)).toEqual([])
    const list = await send(tenantRoutes('read').find((r) => !onTenant(r))!, keys.mixed!)
    expect(list.body.items.map((t: { slug: string }) => t.slug)).toEqual(['acme', 'beta'])
    const patch = tenantRoutes('write').find((r) => r.method === 'PATCH')!
    expect((await send(patch, keys.mixed!, beta)).status).toBe(200)
    expect((await send(patch, keys.mixed!, acme)).status).toBe(404)
  })
})

// Issue 56, item 3: what a tenant key may do instead of naming a user, an invitation by email that
// answers the same whoever the address belongs to; the invited account joins at its next sign-in
// with the address proved. Through a real server, its mails through a real SMTP server.
describe('inviting to acme by email', () => {
  let inv: { ws: string; acme: string; key: Caller; config: oidc.Configuration }
  const invite = (who: Caller, email: string) =>
    callApi(server.baseUrl, who, 'POST', `/v1/workspaces/${inv.ws}/tenants/${inv.acme}/members/invite`, {
      email,
    })
  const members = async () =>
    (
      await callApi(server.baseUrl, inv.key, 'GET', `/v1/workspaces/${inv.ws}/tenants/${inv.acme}/members`)
    ).body.items.map((m: { email: string }) => m.email)
  const mailTo = (address: string) =>
    smtp.waitFor((m) => [m.to ?? []].flat().some((a) => a.value.some((v) => v.address === address)))
  /** A hosted sign-in with a password through openid-client, back at the app. */
  async function signIn(email: string, password: string) {
    const agent = new Agent(server.baseUrl)
    const { url } = await pkceAuthorization(inv.config, `${RP}/cb`, 'openid email')
    const page = await agent.follow(url, {}, atRp)
    const back = await agent.submit(await page.res.text(), page.url, '/login', { email, password }, atRp)
    expect(atRp(back.url)).toBe(true)
  }

  beforeAll(async () => {
    const boss = await person(server.core)
    const ws = await activeWorkspace(server.core, boss.id)
    const made = await callApi(server.baseUrl, boss, 'POST', `/v1/workspaces/${ws}/tenants`, {
      slug: 'acme',
      name: 'Acme Inc.',
    })
    const { config } = await publicClient(server.core, server.baseUrl, ws, `${RP}/cb`)
    inv = { ws, acme: made.body.id, key: await keyCaller(server.core, ws, ['tenant:acme:write']), config }
    const known = await signUp(server.core, ws, {
      email: 'known@example.com',
      password: PASSWORD,
      name: 'Known',
    })
    await markEmailVerified(server.core, known)
    await signUp(server.core, ws, { email: 'unproved@example.com', password: PASSWORD })
  })

  it('answers a tenant key the same 202 for an address the workspace has and one it has not, naming no user', async () => {
    const known = await invite(inv.key, 'Known@Example.com')
    const unknown = await invite(inv.key, 'new@example.com')
    const invited = (email: string) => ({ email, status: 'invited', expires_at: expect.any(String) })
    expect({ status: known.status, body: known.body }).toEqual({
      status: 202,
      body: invited('known@example.com'),
    })
    expect({ status: unknown.status, body: unknown.body }).toEqual({
      status: 202,
      body: invited('new@example.com'),
    })
    // Neither is a member before signing in, so the list tells nothing either.
    expect(await members()).toEqual([])
    // The known user is asked to sign in; the new one gets an invitation to the workspace that names acme.
    const join = await mailTo('known@example.com')
    expect(join.subject).toBe(`You are invited to join Acme Inc.`)
    const welcome = await mailTo('new@example.com')
    expect(welcome.text).toContain('Acme Inc.')
    expect(welcome.text).toContain('/accept-invite?token=')
  })

  it('adds the invited users at their next sign-in: one of the workspace, and a new one once they accept', async () => {
    await signIn('known@example.com', PASSWORD)
    expect(await members()).toEqual(['known@example.com'])
    const link = (await mailTo('new@example.com')).text!.match(/https?:\/\/\S+accept-invite\S+/)![0]
    const agent = new Agent(server.baseUrl)
    const page = await agent.follow(new URL(link))
    const done = await agent.submit(await page.res.text(), page.url, '/accept-invite', { password: PASSWORD })
    expect(done.res.status).toBe(200)
    await signIn('new@example.com', PASSWORD)
    expect((await members()).sort()).toEqual(['known@example.com', 'new@example.com'])
    // Each joining is audited as the inviting key's doing.
    const added = await server.core.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.workspaceId, inv.ws), eq(auditLog.action, 'tenant.member_added')))
    expect(added.map((a) => a.actor)).toEqual([
      expect.stringMatching(/^key:/),
      expect.stringMatching(/^key:/),
    ])
  })

  it('answers 409 for a member, whom the key already sees', async () => {
    expect((await invite(inv.key, 'known@example.com')).status).toBe(409)
  })

  it('adds nobody whose account only claims the address: it must be proved', async () => {
    expect((await invite(inv.key, 'unproved@example.com')).status).toBe(202)
    await signIn('unproved@example.com', PASSWORD)
    expect(await members()).not.toContain('unproved@example.com')
  })
})

describe('the tenants claim', () => {
  it("carries a user's tenant slugs in the ID token and userinfo when the tenants scope is asked for, and is absent otherwise", async () => {
    const boss = await person(server.core)
    const workspace = await activeWorkspace(server.core, boss.id)
    const { config } = await publicClient(server.core, server.baseUrl, workspace, `${RP}/cb`)
    expect(config.serverMetadata().scopes_supported).toContain('tenants')
    expect(config.serverMetadata().claims_supported).toContain('tenants')

    // Signed up without the tenants scope: no claim.
    const agent = new Agent(server.baseUrl)
    const first = await pkceAuthorization(config, `${RP}/cb`, 'openid email')
    const back = await signUpEndUser(
      agent,
      first.url,
      { email: 'ada@example.com', password: 'a long password 1', name: 'Ada' },
      RP,
    )
    const plain = await oidc.authorizationCodeGrant(config, back, {
      pkceCodeVerifier: first.verifier,
      expectedState: oidc.skipStateCheck,
    })
    const sub = decodeJwt(plain.id_token!).sub!
    expect(decodeJwt(plain.id_token!).tenants).toBeUndefined()
    expect((await oidc.fetchUserInfo(config, plain.access_token, sub)).tenants).toBeUndefined()

    // Ada joins beta, then acme (the claim lists slugs in order, not by joining).
    const call = (method: string, path: string, body?: unknown) =>
      callApi(server.baseUrl, boss, method, path, body)
    for (const slug of ['beta', 'acme', 'initech']) {
      const made = await call('POST', `/v1/workspaces/${workspace}/tenants`, { slug, name: slug })
      if (slug === 'initech') continue
      const joined = await call('POST', `/v1/workspaces/${workspace}/tenants/${made.body.id}/members`, {
        user_id: sub,
      })
      expect(joined.status).toBe(201)
    }

    // Asked for with her session: the claim in the ID token and in userinfo.
    const verifier = oidc.randomPKCECodeVerifier()
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: `${RP}/cb`,
      scope: 'openid tenants',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    })
    const again = await agent.follow(url, {}, (u) => u.href.startsWith(RP))
    const tokens = await oidc.authorizationCodeGrant(config, again.url, {
      pkceCodeVerifier: verifier,
      expectedState: oidc.skipStateCheck,
    })
    expect(decodeJwt(tokens.id_token!).tenants).toEqual(['acme', 'beta'])
    expect((await oidc.fetchUserInfo(config, tokens.access_token, sub)).tenants).toEqual(['acme', 'beta'])
  })
})
