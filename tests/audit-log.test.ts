import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import type { App } from '../src/app'
import type { Core } from '../src/core'
import { createSession, sessionCookieName } from '../src/features/auth/sessions'
import { workspaceMembers } from '../src/features/workspaces/schema'
import { createMachineTokenIssuer, PLATFORM, signUp } from '../src/identity'
import { markEmailVerified } from '../src/identity/accounts'
import { ManualClock } from '../src/shared/clock'
import { newId } from '../src/shared/ids'
import { testApp } from './support/app'
import { activeWorkspace } from './support/instances'
import { startTestServer, type TestServer } from './support/server'
import { type Json, signUpUser } from './support/users'

// Issue 25, item 5 and "Must hold": every mutating action leaves exactly one audit entry, written in
// the change's transaction and naming who did it (`user:<account id>` by session or bearer,
// `key:<key id>` by a machine key), from where, and what changed, never a secret; the log reads
// newest first through filters and cursor pages that stay exact when many entries share a
// millisecond (the server's clock is a ManualClock that stands still), and exports as CSV that
// parses back to the same entries. Only workspace:admin reads it. Deleting a workspace takes its name.

const clock = new ManualClock(Date.now())
let server: TestServer

beforeAll(async () => {
  server = await startTestServer({}, undefined, { clock })
})
afterAll(() => server.stop())
beforeEach(() => clock.set(Date.now()))

const UA = 'audit-log-test/1.0 (a client with, a comma)'
const RP = 'https://rp.example.com'

/** A platform account that proved its address, with a dashboard session. */
interface Person {
  id: string
  email: string
  cookie: string
  csrf: string
}

async function person(name: string, core: Core = server.core): Promise<Person> {
  const email = `${name.toLowerCase()}-${crypto.randomUUID()}@example.com`
  const account = await signUp(core, PLATFORM, { email, password: 'a long password 1', name })
  await markEmailVerified(core, account)
  const { cookie, csrfToken } = await createSession(core, account.id, null)
  return { id: account.id, email, cookie: `${sessionCookieName(core)}=${cookie}`, csrf: csrfToken }
}

type Who = Person | { bearer: string }

const credentials = (who: Who): Record<string, string> =>
  'bearer' in who
    ? { authorization: `Bearer ${who.bearer}` }
    : { cookie: who.cookie, 'x-csrf-token': who.csrf }

/** A call as `who`, with this test's user agent; the body as JSON, or as a form with `form`. */
async function call(
  who: Who,
  method: string,
  path: string,
  body?: unknown,
  opts: { form?: boolean; headers?: Record<string, string>; app?: App } = {},
) {
  const type = opts.form ? 'application/x-www-form-urlencoded' : 'application/json'
  // The server, or the app alone (`app.handle`: no job runs, no peer address).
  const send = (init: RequestInit) =>
    opts.app
      ? opts.app.handle(new Request(`http://localhost${path}`, init))
      : fetch(`${server.baseUrl}${path}`, init)
  const res = await send({
    method,
    headers: {
      accept: 'application/json',
      'user-agent': UA,
      ...credentials(who),
      ...(body === undefined ? {} : { 'content-type': type }),
      ...opts.headers,
    },
    body:
      body === undefined
        ? undefined
        : opts.form
          ? new URLSearchParams(body as Record<string, string>).toString()
          : JSON.stringify(body),
    redirect: 'manual',
  })
  const text = await res.text()
  let json: Json = null
  try {
    json = JSON.parse(text)
  } catch {}
  return { status: res.status, body: json, text, res }
}

const logPath = (ws: string, query: Record<string, string | number> = {}) => {
  const q = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString()
  return `/v1/workspaces/${ws}/audit-log${q ? `?${q}` : ''}`
}

/** The whole log (one page of up to 200), newest first. */
async function entries(
  who: Who,
  ws: string,
  query: Record<string, string | number> = {},
  app?: App,
): Promise<Json[]> {
  const r = await call(who, 'GET', logPath(ws, { limit: 200, ...query }), undefined, { app })
  expect(r.status).toBe(200)
  return r.body.items
}

/** The owner's workspace, active, as provisioning leaves it (it records nothing itself). */
async function workspaceOf(
  owner: Person,
  others: [Person, string][] = [],
  core: Core = server.core,
): Promise<string> {
  const ws = await activeWorkspace(core, owner.id)
  for (const [p, role] of others) {
    const now = core.clock.now()
    await core.db
      .insert(workspaceMembers)
      .values({ workspaceId: ws, accountId: p.id, role: role as 'admin', createdAt: now, updatedAt: now })
  }
  return ws
}

/** What every entry made by `who` through this test's client says of where it came from. */
const from = (actor: string) => ({ actor, ip: '127.0.0.1', user_agent: UA })

/**
 * RFC 4180 §2, strictly: a quote only opens a field or doubles inside a quoted one, and a record
 * ends with CRLF; anything else is an error, so a field the export failed to quote fails the test.
 */
function parseCsv(text: string): string[][] {
  const records: string[][] = []
  let record: string[] = []
  let field = ''
  let quoted = false
  let wasQuoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (quoted) {
      if (c !== '"') field += c
      else if (text[i + 1] === '"') {
        field += '"'
        i++
      } else quoted = false
      continue
    }
    if (c === '"') {
      if (field !== '' || wasQuoted) throw new Error(`a stray quote at ${i}`)
      quoted = wasQuoted = true
    } else if (c === ',') {
      record.push(field)
      field = ''
      wasQuoted = false
    } else if (c === '\r' && text[i + 1] === '\n') {
      record.push(field)
      records.push(record)
      record = []
      field = ''
      wasQuoted = false
      i++
    } else if (c === '\r' || c === '\n') throw new Error(`a bare line break at ${i}`)
    else {
      if (wasQuoted) throw new Error(`text after a closing quote at ${i}`)
      field += c
    }
  }
  if (quoted) throw new Error('an unterminated quoted field')
  if (field !== '' || record.length > 0) throw new Error('the last record has no CRLF')
  return records
}

const HEADER = ['id', 'at', 'actor', 'action', 'target_type', 'target_id', 'ip', 'user_agent', 'changes']

/** What the export must hold for a JSON entry: the same fields, formula-like cells behind a `'`. */
const neutral = (v: string | null) => (v !== null && /^[=+\-@\t\r]/.test(v) ? `'${v}` : (v ?? ''))
const asRecord = (i: Json) =>
  [
    i.id,
    i.at,
    i.actor,
    i.action,
    i.target.type,
    i.target.id,
    i.ip,
    i.user_agent,
    JSON.stringify(i.changes),
  ].map(neutral)

async function csvOf(who: Who, ws: string, query: Record<string, string> = {}) {
  const r = await call(who, 'GET', logPath(ws, { ...query, format: 'csv' }))
  expect(r.status).toBe(200)
  expect(r.res.headers.get('content-type')).toBe('text/csv; charset=utf-8')
  expect(r.res.headers.get('content-disposition')).toBe(`attachment; filename="audit-log-${ws}.csv"`)
  const [header, ...records] = parseCsv(r.text)
  expect(header).toEqual(HEADER)
  return { text: r.text, records, total: Number(r.res.headers.get('x-total-count')) }
}

describe('every mutating action leaves one entry, in its transaction', () => {
  it('records an app created and deleted (once), never its client secret, in JSON or CSV', async () => {
    const owner = await person('Owner')
    const ws = await workspaceOf(owner)
    const created = await call(owner, 'POST', `/v1/workspaces/${ws}/apps`, {
      name: 'Shop',
      redirect_uris: [`${RP}/cb`],
    })
    expect(created.status).toBe(201)
    const secret = created.body.client_secret as string
    expect(secret.length).toBeGreaterThan(20)
    const appId = created.body.id
    expect((await call(owner, 'DELETE', `/v1/workspaces/${ws}/apps/${appId}`)).status).toBe(200)
    // Already gone: 200 again, and nothing more to record.
    expect((await call(owner, 'DELETE', `/v1/workspaces/${ws}/apps/${appId}`)).status).toBe(200)
    expect((await call(owner, 'DELETE', `/v1/workspaces/${ws}/apps/app_never`)).status).toBe(200)

    const log = await entries(owner, ws)
    expect(log).toEqual([
      {
        id: expect.stringMatching(/^aud_[0-9A-Z]{26}$/),
        at: new Date(clock.now()).toISOString(),
        ...from(`user:${owner.id}`),
        action: 'app.deleted',
        target: { type: 'app', id: appId },
        changes: {
          name: { from: 'Shop' },
          client_id: { from: created.body.client_id },
          app_type: { from: 'web' },
        },
      },
      {
        id: expect.stringMatching(/^aud_/),
        at: new Date(clock.now()).toISOString(),
        ...from(`user:${owner.id}`),
        action: 'app.created',
        target: { type: 'app', id: appId },
        changes: {
          name: { to: 'Shop' },
          client_id: { to: created.body.client_id },
          app_type: { to: 'web' },
          redirect_uris: { to: [`${RP}/cb`] },
          post_logout_redirect_uris: { to: [] },
          dev_mode: { to: false },
        },
      },
    ])
    const listed = await call(owner, 'GET', logPath(ws))
    expect(listed.text).not.toContain(secret)
    expect((await csvOf(owner, ws)).text).not.toContain(secret)
  })

  it('records an app created and deleted from the dashboard the same way', async () => {
    const owner = await person('Owner')
    const ws = await workspaceOf(owner)
    const htmx = { 'hx-request': 'true', accept: 'text/html' }
    const form = {
      name: 'Dashboard App',
      app_type: 'spa',
      redirect_uris: `${RP}/spa`,
      post_logout_redirect_uris: '',
    }
    const made = await call(owner, 'POST', `/app/workspaces/${ws}/apps`, form, { form: true, headers: htmx })
    expect(made.status).toBe(200)
    const [app] = (await call(owner, 'GET', `/v1/workspaces/${ws}/apps`)).body.items
    const gone = await call(owner, 'DELETE', `/app/workspaces/${ws}/apps/${app.id}`, undefined, {
      headers: htmx,
    })
    expect(gone.status).toBe(200)
    const log = await entries(owner, ws)
    expect(log.map((e) => [e.action, e.target.id, e.actor, e.ip, e.user_agent])).toEqual([
      ['app.deleted', app.id, `user:${owner.id}`, '127.0.0.1', UA],
      ['app.created', app.id, `user:${owner.id}`, '127.0.0.1', UA],
    ])
  })

  it('records a login policy change with the changed fields before and after; an unchanged save records nothing', async () => {
    const owner = await person('Owner')
    const ws = await workspaceOf(owner)
    const path = `/v1/workspaces/${ws}/login-policy`
    const before = (await call(owner, 'GET', path)).body
    const patch = { mfa: 'required', lockout_threshold: before.lockout_threshold, password_min_length: 12 }
    expect((await call(owner, 'PATCH', path, patch)).status).toBe(200)
    expect((await call(owner, 'PATCH', path, patch)).status).toBe(200)
    expect(await entries(owner, ws)).toEqual([
      {
        id: expect.any(String),
        at: expect.any(String),
        ...from(`user:${owner.id}`),
        action: 'login_policy.updated',
        target: { type: 'login_policy', id: ws },
        changes: {
          mfa: { from: before.mfa, to: 'required' },
          password_min_length: { from: before.password_min_length, to: 12 },
        },
      },
    ])
  })

  it('records a user invited, their MFA reset and their deletion (once), never the invitation link', async () => {
    const owner = await person('Owner')
    const ws = await workspaceOf(owner)
    const invited = await call(owner, 'POST', `/v1/workspaces/${ws}/users/invite`, {
      email: 'Invitee@Example.com',
      name: 'Invitee',
    })
    expect(invited.status).toBe(201)
    const userId = invited.body.id
    expect((await call(owner, 'DELETE', `/v1/workspaces/${ws}/users/${userId}/mfa`)).status).toBe(200)
    expect((await call(owner, 'DELETE', `/v1/workspaces/${ws}/users/${userId}`)).status).toBe(200)
    expect((await call(owner, 'DELETE', `/v1/workspaces/${ws}/users/${userId}`)).status).toBe(200)
    const log = await entries(owner, ws)
    const actor = from(`user:${owner.id}`)
    expect(log.map(({ id: _, at: __, ...e }) => e)).toEqual([
      {
        ...actor,
        action: 'user.deleted',
        target: { type: 'user', id: userId },
        changes: { email: { from: 'invitee@example.com' }, name: { from: 'Invitee' } },
      },
      { ...actor, action: 'user.mfa_reset', target: { type: 'user', id: userId }, changes: {} },
      {
        ...actor,
        action: 'user.invited',
        target: { type: 'user', id: userId },
        changes: { email: { to: 'invitee@example.com' }, name: { to: 'Invitee' } },
      },
    ])
    const text = (await call(owner, 'GET', logPath(ws))).text + (await csvOf(owner, ws)).text
    expect(text).not.toContain('accept-invite')
    expect(text).not.toContain('token')
  })

  it('records a rename with the name before and after, by session and by bearer token alike', async () => {
    const owner = await person('Owner')
    const ws = await workspaceOf(owner)
    const admin = await signUpUser(
      server,
      { email: `admin-${crypto.randomUUID()}@example.com`, password: 'an admin password', name: 'Ad' },
      { bearer: true },
    )
    const now = server.core.clock.now()
    await server.core.db
      .insert(workspaceMembers)
      .values({ workspaceId: ws, accountId: admin.id, role: 'admin', createdAt: now, updatedAt: now })
    expect((await call(owner, 'PATCH', `/v1/workspaces/${ws}`, { name: 'Renamed' })).status).toBe(200)
    const byBearer = await call({ bearer: admin.bearer! }, 'PATCH', `/v1/workspaces/${ws}`, {
      name: 'Again',
    })
    expect(byBearer.status).toBe(200)
    // The same name changes nothing, and records nothing.
    expect((await call(owner, 'PATCH', `/v1/workspaces/${ws}`, { name: 'Again' })).status).toBe(200)
    const log = await entries(owner, ws)
    expect(log.map(({ id: _, at: __, ...e }) => e)).toEqual([
      {
        ...from(`user:${admin.id}`),
        action: 'workspace.renamed',
        target: { type: 'workspace', id: ws },
        changes: { name: { from: 'Renamed', to: 'Again' } },
      },
      {
        ...from(`user:${owner.id}`),
        action: 'workspace.renamed',
        target: { type: 'workspace', id: ws },
        changes: { name: { from: 'Acme', to: 'Renamed' } },
      },
    ])
  })

  it('records a member added, and a workspace created through the API by its creator', async () => {
    const owner = await person('Owner')
    const colleague = await person('Colleague')
    const created = await call(owner, 'POST', '/v1/workspaces', { name: 'Fresh' })
    expect(created.status).toBe(201)
    const ws = created.body.id
    const added = await call(owner, 'POST', `/v1/workspaces/${ws}/members`, {
      email: colleague.email,
      role: 'developer',
    })
    expect(added.status).toBe(201)
    const log = await entries(owner, ws)
    expect(log.map(({ id: _, at: __, ...e }) => e)).toEqual([
      {
        ...from(`user:${owner.id}`),
        action: 'member.added',
        target: { type: 'member', id: colleague.id },
        changes: { role: { to: 'developer' } },
      },
      {
        ...from(`user:${owner.id}`),
        action: 'workspace.created',
        target: { type: 'workspace', id: ws },
        changes: { name: { to: 'Fresh' } },
      },
    ])
  })

  it('names a machine key as key:<id>, and the key may read the log with workspace:admin', async () => {
    const owner = await person('Owner')
    const ws = await workspaceOf(owner)
    const issue = createMachineTokenIssuer(server.core)
    const keyId = newId('key')
    const key = { bearer: await issue({ keyId, workspaceId: ws, scopes: ['workspace:admin'] }, 900) }
    expect((await call(key, 'PATCH', `/v1/workspaces/${ws}`, { name: 'By Key' })).status).toBe(200)
    const log = await entries(key, ws)
    expect(log).toHaveLength(1)
    expect(log[0]).toMatchObject({
      ...from(`key:${keyId}`),
      action: 'workspace.renamed',
      changes: { name: { from: 'Acme', to: 'By Key' } },
    })
    expect((await entries(owner, ws, { actor: `key:${keyId}` })).map((e) => e.id)).toEqual([log[0].id])
    const read = await issue({ keyId: newId('key'), workspaceId: ws, scopes: ['workspace:write'] }, 900)
    expect((await call({ bearer: read }, 'GET', logPath(ws))).status).toBe(403)
  })
})

describe('reading the log', () => {
  /** `n` renames, each an entry; the clock stands still unless `stepMs` moves it between them. */
  async function renames(who: Who, ws: string, n: number, stepMs = 0) {
    for (let i = 0; i < n; i++) {
      if (stepMs) clock.advance(stepMs)
      const r = await call(who, 'PATCH', `/v1/workspaces/${ws}`, { name: `Name ${i}` })
      expect(r.status).toBe(200)
    }
  }

  it('walks every page once, newest first, with many entries in the same millisecond', async () => {
    const owner = await person('Owner')
    const ws = await workspaceOf(owner)
    await renames(owner, ws, 9)
    await renames(owner, ws, 5, 1)
    await renames(owner, ws, 9)
    const all = await entries(owner, ws)
    expect(all).toHaveLength(23)
    // Newest first: at descending, then id descending among entries of one millisecond.
    const order = [...all].sort((a, b) => (a.at === b.at ? (a.id < b.id ? 1 : -1) : a.at < b.at ? 1 : -1))
    expect(all.map((e) => e.id)).toEqual(order.map((e) => e.id))
    expect(all[0].changes.name.to).toBe('Name 8')
    expect(new Set(all.map((e) => e.at)).size).toBe(6)

    const walked: string[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const r = await call(owner, 'GET', logPath(ws, { limit: 5, ...(cursor ? { cursor } : {}) }))
      expect(r.status).toBe(200)
      expect(r.body.total).toBe(23)
      expect(r.body.items.length).toBe(pages < 4 ? 5 : 3)
      walked.push(...r.body.items.map((e: Json) => e.id))
      cursor = r.body.next_cursor
      pages++
    } while (cursor)
    expect(pages).toBe(5)
    expect(walked).toEqual(all.map((e) => e.id))
    // The default page is 50.
    expect((await call(owner, 'GET', logPath(ws))).body).toMatchObject({ total: 23, next_cursor: null })

    // An entry written while a client walks lands above its cursor: the walk goes on undisturbed.
    const first = await call(owner, 'GET', logPath(ws, { limit: 10 }))
    await renames(owner, ws, 1)
    const rest = await call(owner, 'GET', logPath(ws, { limit: 200, cursor: first.body.next_cursor }))
    expect([...first.body.items, ...rest.body.items].map((e: Json) => e.id)).toEqual(all.map((e) => e.id))
  })

  it('filters by actor, by action exactly or by prefix, and by time; total counts what matches', async () => {
    const owner = await person('Owner')
    const admin = await person('Admin')
    const ws = await workspaceOf(owner, [[admin, 'admin']])
    const t0 = clock.now()
    const app = await call(owner, 'POST', `/v1/workspaces/${ws}/apps`, {
      name: 'Filtered',
      app_type: 'spa',
      redirect_uris: [`${RP}/cb`],
    })
    clock.advance(1000)
    await call(owner, 'DELETE', `/v1/workspaces/${ws}/apps/${app.body.id}`)
    clock.advance(1000)
    await call(admin, 'PATCH', `/v1/workspaces/${ws}`, { name: 'By Admin' })
    clock.advance(1000)
    await call(admin, 'PATCH', `/v1/workspaces/${ws}/login-policy`, { mfa: 'optional' })

    const actions = async (query: Record<string, string>) => {
      const r = await call(owner, 'GET', logPath(ws, query))
      expect(r.status).toBe(200)
      expect(r.body.total).toBe(r.body.items.length)
      return r.body.items.map((e: Json) => e.action)
    }
    expect(await actions({})).toEqual([
      'login_policy.updated',
      'workspace.renamed',
      'app.deleted',
      'app.created',
    ])
    expect(await actions({ actor: `user:${admin.id}` })).toEqual([
      'login_policy.updated',
      'workspace.renamed',
    ])
    expect(await actions({ actor: `user:${owner.id}` })).toEqual(['app.deleted', 'app.created'])
    expect(await actions({ actor: 'key:mk_nobody' })).toEqual([])
    expect(await actions({ action: 'app.*' })).toEqual(['app.deleted', 'app.created'])
    expect(await actions({ action: 'app.created' })).toEqual(['app.created'])
    // Without `.*` an action matches exactly: `app` is no action.
    expect(await actions({ action: 'app' })).toEqual([])
    expect(await actions({ action: 'login_policy.*' })).toEqual(['login_policy.updated'])
    // `_` is no wildcard in a prefix.
    expect(await actions({ action: 'login.policy.*' })).toEqual([])
    const iso = (ms: number) => new Date(ms).toISOString()
    // since is inclusive, until exclusive; an offset or a date alone are ISO 8601 too.
    expect(await actions({ since: iso(t0 + 1000) })).toEqual([
      'login_policy.updated',
      'workspace.renamed',
      'app.deleted',
    ])
    expect(await actions({ until: iso(t0 + 1000) })).toEqual(['app.created'])
    expect(await actions({ since: iso(t0 + 1000), until: iso(t0 + 2000) })).toEqual(['app.deleted'])
    const plusTwo = new Date(t0 + 2000 + 2 * 3_600_000).toISOString().replace('Z', '+02:00')
    expect(await actions({ since: plusTwo })).toEqual(['login_policy.updated', 'workspace.renamed'])
    expect(await actions({ until: '1999-12-31' })).toEqual([])
    expect(
      await actions({ actor: `user:${admin.id}`, action: 'workspace.*', until: iso(t0 + 3000) }),
    ).toEqual(['workspace.renamed'])
    // The filters hold across pages too.
    const page = await call(owner, 'GET', logPath(ws, { action: 'app.*', limit: 1 }))
    expect(page.body).toMatchObject({ total: 2, items: [{ action: 'app.deleted' }] })
    const next = await call(
      owner,
      'GET',
      logPath(ws, { action: 'app.*', limit: 1, cursor: page.body.next_cursor }),
    )
    expect(next.body).toMatchObject({ total: 2, items: [{ action: 'app.created' }], next_cursor: null })
  })

  it('answers 422 at the field for a filter, limit or cursor it cannot use', async () => {
    const owner = await person('Owner')
    const ws = await workspaceOf(owner)
    const other = await workspaceOf(owner)
    await call(owner, 'PATCH', `/v1/workspaces/${other}`, { name: 'One' })
    await call(owner, 'PATCH', `/v1/workspaces/${other}`, { name: 'Two' })
    const foreign = (await call(owner, 'GET', logPath(other, { limit: 1 }))).body.next_cursor
    const valid = Buffer.from(`${clock.now()}.${newId('aud')}`).toString('base64url')
    for (const [field, value] of [
      ['since', 'yesterday'],
      ['since', '2025-02-30'],
      ['until', '2025-01-31T25:00Z'],
      ['until', '1738281600000'],
      ['actor', 'alice'],
      ['actor', 'user:'],
      ['action', 'App.Created'],
      ['action', '*'],
      ['action', 'app*'],
      ['limit', '0'],
      ['limit', '201'],
      ['cursor', 'not-a-cursor'],
      ['cursor', `${valid}x`],
      ['cursor', Buffer.from('123.aud_x').toString('base64url')],
    ] as const) {
      const r = await call(owner, 'GET', logPath(ws, { [field]: value }))
      expect({ field, value, status: r.status }).toEqual({ field, value, status: 422 })
      expect(r.body.detail[0].loc).toEqual(['query', field])
    }
    // A cursor is a position, not a grant: one from another workspace reads only this one's entries.
    const r = await call(owner, 'GET', logPath(ws, { cursor: foreign }))
    expect(r.body).toEqual({ items: [], total: 0, next_cursor: null })
    expect((await call(owner, 'GET', logPath(ws, { cursor: valid }))).status).toBe(200)
  })

  it('answers 403 to a developer and a viewer (JSON, CSV and page), and 404 to a stranger', async () => {
    const owner = await person('Owner')
    const developer = await person('Developer')
    const viewer = await person('Viewer')
    const stranger = await person('Stranger')
    const ws = await workspaceOf(owner, [
      [developer, 'developer'],
      [viewer, 'viewer'],
    ])
    const page = `/app/workspaces/${ws}/settings/audit-log`
    for (const who of [developer, viewer]) {
      expect((await call(who, 'GET', logPath(ws))).status).toBe(403)
      expect((await call(who, 'GET', logPath(ws, { format: 'csv' }))).status).toBe(403)
      expect((await call(who, 'GET', page, undefined, { headers: { accept: 'text/html' } })).status).toBe(403)
    }
    expect((await call(stranger, 'GET', logPath(ws))).status).toBe(404)
    expect((await call(owner, 'GET', logPath(ws))).status).toBe(200)
    expect((await call(owner, 'GET', page, undefined, { headers: { accept: 'text/html' } })).status).toBe(200)
  })
})

describe('the CSV export', () => {
  it('parses back to the JSON entries: RFC 4180 quoting, changes as JSON, formulas neutralised', async () => {
    const owner = await person('Owner')
    const ws = await workspaceOf(owner)
    // Cells a spreadsheet would run: in the user agent (a cell of its own) and in names (inside `changes`).
    // (A tab or CR cannot start a header value, so csv.test.ts covers those.)
    const agents = [
      '=HYPERLINK("https://evil.example","x")',
      '+1+1',
      '-2',
      '@SUM(A1)',
      'plain, "quoted" agent',
      'x',
    ]
    for (const [i, agent] of agents.entries()) {
      const name = `=cmd|' /C calc'!A${i}`
      const r = await call(
        owner,
        'PATCH',
        `/v1/workspaces/${ws}`,
        { name },
        { headers: { 'user-agent': agent } },
      )
      expect(r.status).toBe(200)
    }
    const made = await call(owner, 'POST', `/v1/workspaces/${ws}/apps`, {
      name: '=1+2, "Shop"',
      redirect_uris: [`${RP}/cb?a=1,b=2`],
    })
    expect(made.status).toBe(201)
    const items = await entries(owner, ws)
    expect(items).toHaveLength(7)
    const { records, total, text } = await csvOf(owner, ws)
    expect(total).toBe(7)
    expect(records).toEqual(items.map(asRecord))
    expect(text).not.toContain(made.body.client_secret)
    // Each formula-like user agent is behind an apostrophe; the JSON of `changes` starts with `{`.
    const sent = records.map((r) => r[7])
    expect(sent).toContain(`'=HYPERLINK("https://evil.example","x")`)
    expect(sent).toContain("'+1+1")
    expect(sent).toContain("'-2")
    expect(sent).toContain("'@SUM(A1)")
    expect(sent).toContain('plain, "quoted" agent')
    expect(sent.filter((a) => a?.startsWith("'"))).toHaveLength(4)
    for (const r of records) expect(r[8]!.startsWith('{')).toBe(true)
    expect(JSON.parse(records[0]![8]!)).toMatchObject({ name: { to: '=1+2, "Shop"' } })

    // The filters apply to the export as to the list.
    const apps = await csvOf(owner, ws, { action: 'app.*' })
    expect(apps.records.map((r) => r[3])).toEqual(['app.created'])
    expect(apps.total).toBe(1)
    const none = await csvOf(owner, ws, { actor: 'key:mk_nobody' })
    expect(none.records).toEqual([])
    // Every field quoted, the header's too (a `;` list separator cannot split one).
    expect(none.text).toBe(`${HEADER.map((h) => `"${h}"`).join(',')}\r\n`)
    const bad = await call(owner, 'GET', logPath(ws, { format: 'csv', since: 'soon' }))
    expect(bad.status).toBe(422)
    expect(bad.body.detail[0].loc).toEqual(['query', 'since'])
  })

  it('exports every matching entry, across its 500-entry chunks, in the order of the pages', async () => {
    const owner = await person('Owner')
    const ws = await workspaceOf(owner)
    const actor = { id: `user:${owner.id}`, ip: null, userAgent: null }
    // 1,201 entries: two full chunks and a part, many sharing a millisecond.
    await server.core.store.tx(async (tx) => {
      for (let i = 0; i < 1201; i++) {
        if (i % 7 === 0) clock.advance(1)
        const action = i % 3 === 0 ? 'app.created' : 'workspace.renamed'
        await server.core.audit(
          {
            workspaceId: ws,
            actor,
            action,
            target: { type: 'test', id: String(i) },
            changes: { n: { to: i } },
          },
          { tx },
        )
      }
    })
    const walked: Json[] = []
    let cursor: string | null = null
    do {
      const r = await call(owner, 'GET', logPath(ws, { limit: 200, ...(cursor ? { cursor } : {}) }))
      walked.push(...r.body.items)
      cursor = r.body.next_cursor
    } while (cursor)
    expect(walked).toHaveLength(1201)
    const { records, total } = await csvOf(owner, ws)
    expect(total).toBe(1201)
    expect(records).toEqual(walked.map(asRecord))
    expect(new Set(records.map((r) => r[0])).size).toBe(1201)
    const created = await csvOf(owner, ws, { action: 'app.created' })
    expect(created.records.map((r) => r[5])).toEqual(
      walked.filter((e) => e.action === 'app.created').map((e) => e.target.id),
    )
  })
})

describe('deleting a workspace', () => {
  // The app alone runs no job: the teardown waits, so what a delete recorded can still be read.
  let app: App
  let core: Core
  beforeAll(async () => {
    ;({ app, core } = await testApp())
  })

  it('takes its exact name when a body is sent (422 otherwise, nothing deleted), then answers 202 and records workspace.deleted', async () => {
    const owner = await person('Owner', core)
    const ws = await workspaceOf(owner, [], core)
    const path = `/v1/workspaces/${ws}`
    const missing = await call(owner, 'DELETE', path, {}, { app })
    expect(missing.status).toBe(422)
    expect(missing.body.detail).toEqual([
      { loc: ['body', 'confirm'], msg: expect.any(String), type: 'missing' },
    ])
    for (const confirm of ['acme', 'Acme ', ' Acme', 'Other', '']) {
      const wrong = await call(owner, 'DELETE', path, { confirm }, { app })
      expect({ confirm, status: wrong.status }).toEqual({ confirm, status: 422 })
      expect(wrong.body.detail).toEqual([
        {
          loc: ['body', 'confirm'],
          msg: "Type the workspace's exact name to confirm its deletion",
          type: 'confirm_mismatch',
        },
      ])
    }
    expect((await call(owner, 'GET', path, undefined, { app })).body.state).toBe('active')
    expect(await entries(owner, ws, {}, app)).toEqual([])

    const done = await call(owner, 'DELETE', path, { confirm: 'Acme' }, { app })
    expect(done.status).toBe(202)
    expect(done.body).toEqual({ id: ws, state: 'deleting' })
    const deleted = {
      actor: `user:${owner.id}`,
      user_agent: UA,
      action: 'workspace.deleted',
      target: { type: 'workspace', id: ws },
      changes: { name: { from: 'Acme' } },
    }
    expect(await entries(owner, ws, {}, app)).toEqual([expect.objectContaining(deleted)])
    // Deleting again is not an error, and records nothing more.
    expect((await call(owner, 'DELETE', path, { confirm: 'Acme' }, { app })).status).toBe(202)
    expect(await entries(owner, ws, {}, app)).toHaveLength(1)
  })

  it('purges the workspace, its log included, once the teardown job runs', async () => {
    const owner = await person('Owner')
    const ws = await workspaceOf(owner)
    expect((await call(owner, 'PATCH', `/v1/workspaces/${ws}`, { name: 'Doomed' })).status).toBe(200)
    const done = await call(owner, 'DELETE', `/v1/workspaces/${ws}`, { confirm: 'Doomed' })
    expect(done.status).toBe(202)
    await server.tick()
    expect((await call(owner, 'GET', `/v1/workspaces/${ws}`)).status).toBe(404)
    const left = await server.core.store.query('SELECT id FROM audit_log WHERE workspace_id = $1', [ws])
    expect(left).toEqual([])
  })

  it('documents the confirmation body, optional (SPEC: the request is none), in the API description', async () => {
    const spec = (await (await fetch(`${server.baseUrl}/openapi.json`)).json()) as Json
    const op = spec.paths['/v1/workspaces/{workspace_id}'].delete
    expect(op.requestBody.required).toBe(false)
    const schema = op.requestBody.content['application/json'].schema
    expect(schema.required).toEqual(['confirm'])
    expect(schema.properties.confirm.type).toBe('string')
    expect(op.description).toContain('"confirm"')
    const log = spec.paths['/v1/workspaces/{workspace_id}/audit-log/'].get
    expect(log.parameters.map((p: Json) => p.name).sort()).toEqual(
      ['action', 'actor', 'cursor', 'format', 'limit', 'since', 'until', 'workspace_id'].sort(),
    )
  })

  it('from the settings page: owners and admins see a typed-name form; a wrong name is refused there', async () => {
    const owner = await person('Owner', core)
    const developer = await person('Developer', core)
    const ws = await workspaceOf(owner, [[developer, 'developer']], core)
    const settings = `/app/workspaces/${ws}/settings`
    const html = { accept: 'text/html' }
    const page = await call(owner, 'GET', settings, undefined, { headers: html, app })
    expect(page.text).toContain('id="delete-workspace"')
    expect(page.text).toContain(`action="/app/workspaces/${ws}/delete"`)
    expect(page.text).toContain(`href="/app/workspaces/${ws}/settings/audit-log"`)
    const devPage = await call(developer, 'GET', settings, undefined, { headers: html, app })
    expect(devPage.status).toBe(200)
    expect(devPage.text).not.toContain('id="delete-workspace"')
    const htmx = { ...html, 'hx-request': 'true' }
    const path = `/app/workspaces/${ws}/delete`
    const post = (who: Person, confirm: string) =>
      call(who, 'POST', path, { confirm }, { form: true, headers: htmx, app })
    expect((await post(developer, 'Acme')).status).toBe(403)

    const wrong = await post(owner, 'acme')
    expect(wrong.status).toBe(422)
    expect(wrong.text).toContain('Type the workspace&#x27;s exact name to confirm its deletion.')
    expect(wrong.text).toContain('value="acme"')
    expect((await call(owner, 'GET', `/v1/workspaces/${ws}`, undefined, { app })).body.state).toBe('active')

    const done = await post(owner, 'Acme')
    expect(done.status).toBe(200)
    expect(done.res.headers.get('hx-redirect')).toBe('/app/workspaces')
    expect((await call(owner, 'GET', `/v1/workspaces/${ws}`, undefined, { app })).body.state).toBe('deleting')
    expect((await entries(owner, ws, {}, app)).map((e) => [e.action, e.actor, e.user_agent])).toEqual([
      ['workspace.deleted', `user:${owner.id}`, UA],
    ])
    // Without script, the form posts with its CSRF field and the browser is sent on (303).
    const other = await workspaceOf(owner, [], core)
    const plain = await app.handle(
      new Request(`http://localhost/app/workspaces/${other}/delete`, {
        method: 'POST',
        headers: { cookie: owner.cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ confirm: 'Acme', _csrf: owner.csrf }).toString(),
      }),
    )
    expect(plain.status).toBe(303)
    expect(plain.headers.get('location')).toBe('/app/workspaces')
  })
})
