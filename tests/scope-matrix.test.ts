import { beforeAll, describe, expect, it } from 'bun:test'
import type { App } from '../src/app'
import type { Core } from '../src/core'
import { createSession, sessionCookieName } from '../src/features/auth/sessions'
import { workspaceMembers } from '../src/features/workspaces/schema'
import { createWorkspaceService } from '../src/features/workspaces/service'
import { createMachineTokenIssuer, PLATFORM, signUp } from '../src/identity'
import { testApp } from './support/app'
import { TEST_ACTOR } from './support/core'
import { type GuardedRoute, pathOf, routeKey, routeTable, type TableRoute } from './support/route-table'

// Issue 25: the isolation and scope matrix, generated from the app's route table (a route added
// later is in it by itself). Every route on a workspace declares a scope through the one guard; a
// member or a machine key of workspace B gets 404 on workspace A; a viewer and a read key get 403 on
// every write; a developer and a write key get 403 on every admin route; a machine key acts on the
// JSON API only. The guard decides before anything else runs (issue 24), so one request per route
// and caller, with no body, tells what it decides.

/** Routes anyone may call: each one a decision, so a new unguarded route fails until it is added here. */
const PUBLIC = new Set([
  'GET /',
  'GET /app/signed-out',
  'GET /app/signup',
  'GET /docs',
  'GET /docs/scalar.js',
  'GET /docs/setup.js',
  'GET /healthz',
  'GET /openapi.json',
  'GET /public/:file',
  'GET /v1/auth/login',
  'GET /v1/auth/callback',
  'POST /v1/auth/logout',
  'POST /v1/auth/device/start',
  'POST /v1/auth/device/poll',
  // The jwt-bearer exchange: the signed assertion is the credential (RFC 7523).
  'POST /v1/auth/token',
  'GET /dev/outbox',
  // The mailed invitation: its token is the credential; signed out, the page says how to sign in.
  'GET /app/invitation',
  // Stripe's events: the signature over the raw body is the credential (SPEC "Inbound payment-provider webhook").
  'POST /v1/webhooks/payments',
])

/** The headers that say who is calling. */
type Caller = Record<string, string>

let app: App
let core: Core
let routes: TableRoute[]
let wsA: string
const callers: Record<string, Caller> = {}

const onWorkspace = (r: TableRoute): r is GuardedRoute => r.path.includes(':workspace_id')
const api = (r: TableRoute) => r.path.startsWith('/v1/')
const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/**
 * What needs workspace:admin whatever a route declares (issue 25, SPEC's scope table): changing
 * members, machine keys, the plan and billing, the login policy (security settings), the mail server
 * (it receives every sign-in and reset link), an MFA reset, retrying provisioning and deleting the
 * workspace; and reading the audit log.
 */
const ADMIN_WRITES = [
  // The workspace's members (a tenant's members are users of the workspace: workspace:write).
  /:workspace_id\/(settings\/)?members/,
  /\/machine-keys/,
  /\/billing/,
  /\/login-policy/,
  /\/smtp/,
  /\/mfa$/,
  /\/retry-provisioning$/,
]
const needsAdmin = (r: GuardedRoute) =>
  r.needs === 'workspace:admin' ||
  /\/audit-log/.test(r.path) ||
  (UNSAFE.has(r.method) && ADMIN_WRITES.some((p) => p.test(r.path))) ||
  (r.method === 'DELETE' && /^\/(v1|app)\/workspaces\/:workspace_id\/?$/.test(r.path))
/**
 * Unsafe methods that change nothing of the workspace, so a viewer may call them: each one a
 * decision. "Try sign-in" starts a sign-in at the hosted pages, which a viewer can do at any app.
 */
const VIEWER_ACTIONS = new Set(['POST /app/workspaces/:workspace_id/try'])
/** Every write (an unsafe method) needs at least workspace:write, whatever a route declares. */
const writes = () =>
  routes.filter(onWorkspace).filter((r) => UNSAFE.has(r.method) && !VIEWER_ACTIONS.has(routeKey(r)))
const admins = () => routes.filter(onWorkspace).filter(needsAdmin)

beforeAll(async () => {
  ;({ app, core } = await testApp())
  const workspaces = createWorkspaceService(core)
  const person = async (email: string) => {
    const account = await signUp(core, PLATFORM, { email, password: 'a long password 1' })
    const { cookie, csrfToken } = await createSession(core, account.id, null)
    return {
      id: account.id,
      headers: { cookie: `${sessionCookieName(core)}=${cookie}`, 'x-csrf-token': csrfToken },
    }
  }
  const ownerA = await person('owner-a@example.com')
  const ownerB = await person('owner-b@example.com')
  wsA = (await workspaces.create(ownerA.id, TEST_ACTOR, 'A')).id
  const wsB = (await workspaces.create(ownerB.id, TEST_ACTOR, 'B')).id
  for (const role of ['viewer', 'developer'] as const) {
    const member = await person(`${role}@example.com`)
    const now = core.clock.now()
    await core.db
      .insert(workspaceMembers)
      .values({ workspaceId: wsA, accountId: member.id, role, createdAt: now, updatedAt: now })
    callers[role] = member.headers
  }
  callers.memberOfB = ownerB.headers
  // Machine keys' access tokens, as the jwt-bearer exchange issues them (platform-signed JWTs).
  const issue = createMachineTokenIssuer(core)
  const key = async (workspaceId: string, scopes: string[]) => ({
    authorization: `Bearer ${await issue({ keyId: `mk_${scopes.join('_')}`, workspaceId, scopes }, 900)}`,
  })
  callers.readKey = await key(wsA, ['workspace:read'])
  callers.writeKey = await key(wsA, ['workspace:write'])
  callers.adminKey = await key(wsA, ['workspace:admin'])
  callers.keyOfB = await key(wsB, ['workspace:admin'])
  routes = routeTable(app)
})

/** `caller`'s request on workspace A, as htmx asks on dashboard routes. */
function send(r: TableRoute, caller: Caller): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json', ...caller }
  if (!api(r)) headers['hx-request'] = 'true'
  return app.handle(new Request(`http://localhost:8080${pathOf(r, wsA)}`, { method: r.method, headers }))
}

/** Every route of `rs` that does not answer `caller` with `expected`, as `METHOD path: status`. */
async function mismatches(rs: TableRoute[], caller: Caller, expected: number): Promise<string[]> {
  const wrong: string[] = []
  for (const r of rs) {
    const { status } = await send(r, caller)
    if (status !== expected) wrong.push(`${routeKey(r)}: ${status}, expected ${expected}`)
  }
  return wrong
}

describe('the route table', () => {
  it('declares a workspace scope on every route of a workspace, and the guard or a public decision on every other', () => {
    const onWs = routes.filter(onWorkspace)
    expect(onWs.length).toBeGreaterThan(20)
    expect(onWs.filter((r) => !r.needs?.startsWith('workspace:')).map(routeKey)).toEqual([])
    expect(routes.filter((r) => !r.needs && !PUBLIC.has(routeKey(r))).map(routeKey)).toEqual([])
  })
})

describe('on workspace A', () => {
  it("answers 404 to a member of workspace B on every route, and to B's machine key on every API route", async () => {
    expect(await mismatches(routes.filter(onWorkspace), callers.memberOfB!, 404)).toEqual([])
    expect(await mismatches(routes.filter(onWorkspace).filter(api), callers.keyOfB!, 404)).toEqual([])
  })

  it('answers 403 to a viewer and to a workspace:read key on every write', async () => {
    expect(writes().length).toBeGreaterThan(10)
    expect(await mismatches(writes(), callers.viewer!, 403)).toEqual([])
    expect(await mismatches(writes().filter(api), callers.readKey!, 403)).toEqual([])
  })

  it('answers 403 to a developer and to a workspace:write key on every admin route', async () => {
    expect(admins().length).toBeGreaterThan(4)
    expect(await mismatches(admins(), callers.developer!, 403)).toEqual([])
    expect(await mismatches(admins().filter(api), callers.writeKey!, 403)).toEqual([])
  })

  it('names the missing scope in the 403', async () => {
    const admin = admins().find(api)!
    expect(await (await send(admin, callers.writeKey!)).json()).toEqual({
      detail: 'This action needs the workspace:admin scope',
    })
  })

  it('lets a viewer and a read key read: no read route refuses them', async () => {
    const reads = routes.filter(onWorkspace).filter((r) => r.needs === 'workspace:read' && r.method === 'GET')
    const refused = async (rs: TableRoute[], caller: Caller) => {
      const out: string[] = []
      for (const r of rs) {
        const res = await send(r, caller)
        const body = res.headers.get('content-type')?.includes('json') ? await res.json() : null
        const isWorkspace404 =
          res.status === 404 && (body as { detail?: string })?.detail === 'Workspace not found'
        if (res.status === 401 || res.status === 403 || isWorkspace404)
          out.push(`${routeKey(r)}: ${res.status}`)
      }
      return out
    }
    expect(await refused(reads, callers.viewer!)).toEqual([])
    expect(await refused(reads.filter(api), callers.readKey!)).toEqual([])
  })

  it('refuses a machine token on every dashboard page and on the platform routes of people, whatever its scopes', async () => {
    const pages = routes.filter((r) => r.needs && !api(r))
    expect(pages.length).toBeGreaterThan(10)
    expect(await mismatches(pages, callers.adminKey!, 403)).toEqual([])
    const people = routes.filter((r) => r.needs === 'signed-in' && api(r))
    expect(people.length).toBeGreaterThan(0)
    expect(await mismatches(people, callers.adminKey!, 403)).toEqual([])
  })
})
