import { beforeAll, describe, expect, it } from 'bun:test'
import type { App } from '../src/app'
import { createSession, sessionCookieName } from '../src/features/auth/sessions'
import { createWorkspaceService } from '../src/features/workspaces/service'
import { PLATFORM, signUp } from '../src/identity'
import { testApp } from './support/app'
import { TEST_ACTOR } from './support/core'
import { type GuardedRoute, guardedRoutes, routeKey as key, pathOf } from './support/route-table'

// Who you are before what you sent: on every route behind the auth guard, a caller learns that it is
// not signed in (401), may not act (403) or cannot see the workspace (404) before anything about what
// it sent (422). The routes come from the app's own table: a route added later is covered by itself.

/** The headers that say who is calling. */
type Caller = Record<string, string>

let app: App
let workspaceId: string
let routes: GuardedRoute[]
const nobody: Caller = {}
const badBearer: Caller = { authorization: 'Bearer nope' }
let owner: Caller
let ownerNoCsrf: Caller
let stranger: Caller

beforeAll(async () => {
  const built = await testApp()
  app = built.app
  const { core } = built
  // Platform accounts with a dashboard session each, as the sign-in callback leaves them.
  const signedIn = async (email: string) => {
    const account = await signUp(core, PLATFORM, { email, password: 'a long password 1' })
    const { cookie, csrfToken } = await createSession(core, account.id, null)
    return { id: account.id, cookie: `${sessionCookieName(core)}=${cookie}`, csrf: csrfToken }
  }
  const o = await signedIn('owner@example.com')
  const s = await signedIn('stranger@example.com')
  owner = { cookie: o.cookie, 'x-csrf-token': o.csrf }
  ownerNoCsrf = { cookie: o.cookie }
  stranger = { cookie: s.cookie, 'x-csrf-token': s.csrf }
  workspaceId = (await createWorkspaceService(core).create(o.id, TEST_ACTOR, 'Owned')).id

  routes = guardedRoutes(app)
})

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
const carriesBody = (r: GuardedRoute) => UNSAFE.has(r.method)
const dashboard = (r: GuardedRoute) => r.path.startsWith('/app/')

/** A query that fails the route's schema: every property far too long, and not a number either. */
const badQuery = (r: GuardedRoute) =>
  r.query ? `?${new URLSearchParams(Object.keys(r.query.properties).map((k) => [k, 'x'.repeat(1000)]))}` : ''

/**
 * A body that fails the route's schema: an object for every property (no field here takes one). A
 * non-object body would not do: Elysia skips validating an all-optional body that is not an object.
 */
const badBody = (r: GuardedRoute) =>
  JSON.stringify(Object.fromEntries(Object.keys(r.body?.properties ?? { x: 0 }).map((k) => [k, { bad: [] }])))

/**
 * Sends `caller`'s request with what fails validation: a bad body (or, with `malformed`, JSON that
 * does not parse) and a bad query. Dashboard routes are
 * asked as htmx does, so a signed-out caller gets a 401 there too rather than a redirect.
 */
async function send(
  r: GuardedRoute,
  caller: Caller,
  opts: { workspace?: string; ids?: Record<string, string>; malformed?: boolean } = {},
) {
  const headers: Record<string, string> = { accept: 'application/json', ...caller }
  if (dashboard(r)) headers['hx-request'] = 'true'
  let body: string | undefined
  if (carriesBody(r)) {
    headers['content-type'] = 'application/json'
    body = opts.malformed ? '{"name": ' : badBody(r)
  }
  const url = `http://localhost:8080${pathOf(r, opts.workspace ?? workspaceId, opts.ids)}${badQuery(r)}`
  return app.handle(new Request(url, { method: r.method, headers, body }))
}

/** Every route of `rs` that does not answer `caller` with `expected`, as `METHOD path: status`. */
async function mismatches(
  rs: GuardedRoute[],
  caller: Caller,
  expected: (r: GuardedRoute) => number,
  opts: { workspace?: string; malformed?: boolean } = {},
) {
  const wrong: string[] = []
  for (const r of rs) {
    const { status } = await send(r, caller, opts)
    if (status !== expected(r)) wrong.push(`${key(r)}: ${status}, expected ${expected(r)}`)
  }
  return wrong
}

const validated = () => routes.filter((r) => r.body || r.query)
// Routes on a path's workspace; the others ('signed-in', 'any-caller') name none.
const scoped = (rs: GuardedRoute[]) => rs.filter((r) => r.needs.startsWith('workspace:'))

describe('the route table', () => {
  it('names the guarded routes, with and without a body or query schema', () => {
    const keys = routes.map(key)
    expect(keys).toContain('POST /v1/workspaces/:workspace_id/apps/')
    expect(keys).toContain('POST /v1/workspaces/')
    expect(keys).toContain('GET /v1/workspaces/:workspace_id/users/')
    expect(keys).toContain('POST /app/workspaces/:workspace_id/apps')
    expect(validated().length).toBeGreaterThanOrEqual(7)
    expect(scoped(validated()).length).toBeGreaterThanOrEqual(5)
  })
})

describe('a guarded route with a body or query that fails validation', () => {
  it('answers a caller with no credentials, or credentials that fail, 401 and never 422', async () => {
    expect(await mismatches(validated(), nobody, () => 401)).toEqual([])
    expect(await mismatches(validated(), badBearer, () => 401)).toEqual([])
  })

  it('answers a session without its CSRF token 403 on an unsafe method', async () => {
    expect(await mismatches(validated().filter(carriesBody), ownerNoCsrf, () => 403)).toEqual([])
  })

  it("answers 404 to a signed-in caller who cannot see the path's workspace", async () => {
    expect(await mismatches(scoped(validated()), stranger, () => 404)).toEqual([])
  })

  it('answers 422 to a caller who may act, so the details go only to them', async () => {
    expect(await mismatches(validated(), owner, () => 422)).toEqual([])
    // Signed in is all `auth` routes ask: another account may act there too.
    const signedIn = validated().filter((r) => r.needs === 'signed-in')
    expect(signedIn.length).toBeGreaterThan(0)
    expect(await mismatches(signedIn, stranger, () => 422)).toEqual([])
  })
})

describe('a guarded route with a JSON body that does not parse', () => {
  // Elysia's parser refuses it before any hook (see the guard's comment: a parse hook of our own
  // would hide every request body from the OpenAPI document). Its answer names no field of the
  // schema and is the same whoever asks, so it tells a caller who may not act nothing.
  it('answers everyone the same 422, with nothing of the route in it', async () => {
    const withBody = routes.filter(carriesBody)
    const answers = { api: new Set<string>(), dashboard: new Set<string>() }
    for (const caller of [nobody, stranger, owner]) {
      for (const r of withBody) {
        const res = await send(r, caller, { malformed: true })
        answers[dashboard(r) ? 'dashboard' : 'api'].add(`${res.status} ${await res.text()}`)
      }
    }
    expect([...answers.api]).toEqual([
      `422 ${JSON.stringify({ detail: [{ loc: ['body'], msg: 'Request body is not valid JSON', type: 'json_invalid' }] })}`,
    ])
    expect([...answers.dashboard]).toEqual([
      '422 <div class="alert error" role="alert">Some fields are not valid. Check them and try again.</div>',
    ])
  })
})

describe('the OpenAPI document', () => {
  it('describes the request body of guarded routes', async () => {
    const spec = (await (await app.handle(new Request('http://localhost:8080/openapi.json'))).json()) as {
      paths: Record<
        string,
        Record<string, { requestBody?: { content: Record<string, { schema: unknown }> } }>
      >
    }
    const create = spec.paths['/v1/workspaces/{workspace_id}/apps/']?.post?.requestBody?.content
    expect(Object.keys(create ?? {})).toContain('application/json')
    expect(create?.['application/json']?.schema).toMatchObject({ required: ['name', 'redirect_uris'] })
  })
})

describe('a path id that cannot name a resource', () => {
  // DESIGN's order: 401, then the path's parameters (422), then 403/404, then the body and query. On
  // the JSON API the 422 goes to any signed-in caller, whether or not they could see such a
  // workspace (the path's format is no secret), and names the path alone; the id is never looked
  // up (PostgreSQL refuses a NUL in text). A dashboard page answers 404: a person followed a bad link.
  const api = (rs: GuardedRoute[]) => rs.filter((r) => !dashboard(r))
  /** The `loc`s of every 422 `rs` answer `caller`. */
  async function locs(
    rs: GuardedRoute[],
    caller: Caller,
    opts: { workspace?: string; ids?: Record<string, string> },
  ) {
    const seen = new Set<string>()
    for (const r of rs) {
      const res = await send(r, caller, opts)
      for (const d of (await res.json()).detail) seen.add(JSON.stringify(d.loc))
    }
    return [...seen]
  }

  for (const id of ['not-a-uuid', '%00', 'platform']) {
    it(`(${id} as the workspace) answers 401 with no credentials, 422 at the path on the API to any signed-in caller, 404 on a page`, async () => {
      const rs = scoped(routes)
      expect(await mismatches(rs, nobody, () => 401, { workspace: id })).toEqual([])
      for (const caller of [stranger, owner]) {
        const expected = (r: GuardedRoute) => (dashboard(r) ? 404 : 422)
        expect(await mismatches(rs, caller, expected, { workspace: id })).toEqual([])
        expect(await locs(api(rs), caller, { workspace: id })).toEqual([
          JSON.stringify(['path', 'workspace_id']),
        ])
      }
    })
  }

  it('(a nested id) answers 401 with no credentials, then 422 at its place in the path on the API, before the 404 of a workspace the caller cannot see', async () => {
    const nested = api(scoped(routes)).filter((r) => /\/:(?!workspace_id\b)\w+/.test(r.path))
    expect(nested.length).toBeGreaterThan(15)
    const bad = (r: GuardedRoute) =>
      Object.fromEntries([...r.path.matchAll(/\/:(\w+)/g)].map(([, name]) => [name!, 'not%20an%20id']))
    const wrong: string[] = []
    for (const r of nested) {
      const ids = bad(r)
      const names = Object.keys(ids)
        .filter((n) => n !== 'workspace_id')
        .sort()
      if ((await send(r, nobody, { ids })).status !== 401) wrong.push(`${key(r)}: not 401`)
      for (const caller of [stranger, owner]) {
        const res = await send(r, caller, { ids })
        const body = await res.json()
        const at = res.status === 422 ? body.detail.map((d: { loc: string[] }) => d.loc[1]).sort() : []
        if (
          res.status !== 422 ||
          body.detail.some((d: { loc: string[] }) => d.loc[0] !== 'path') ||
          JSON.stringify(at) !== JSON.stringify(names)
        )
          wrong.push(`${key(r)}: ${res.status} ${JSON.stringify(body)}`)
      }
    }
    expect(wrong).toEqual([])
  })
})

describe('a CSRF token sent in the body rather than a header', () => {
  const post = (path: string, type: string, body: string) =>
    app.handle(
      new Request(`http://localhost:8080${path}`, {
        method: 'POST',
        headers: { cookie: owner.cookie!, 'content-type': type, 'hx-request': 'true' },
        body,
      }),
    )
  const form = (csrf: string) =>
    post(
      `/app/workspaces/${workspaceId}/apps`,
      'application/x-www-form-urlencoded',
      new URLSearchParams({ _csrf: csrf, name: '', redirect_uris: 'not a uri' }).toString(),
    )
  const json = (csrf: string) =>
    post(`/v1/workspaces/${workspaceId}/apps`, 'application/json', JSON.stringify({ _csrf: csrf }))

  it("is read by the guard from a dashboard form: the right one reaches the form's own 422", async () => {
    const res = await form(owner['x-csrf-token']!)
    expect(res.status).toBe(422)
    expect(await res.text()).toContain('id="app-form"')
    expect((await form('wrong')).status).toBe(403)
  })

  it('is read by the guard from a JSON body: the right one gets as far as validation (422)', async () => {
    expect((await json(owner['x-csrf-token']!)).status).toBe(422)
    expect((await json('wrong')).status).toBe(403)
  })
})
