import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { isoTime, ManualClock } from '../src/shared/clock'
import { type Caller, callApi, keyCaller, type Person, person } from './support/callers'
import { activeWorkspace } from './support/instances'
import { startTestServer, type TestServer } from './support/server'
import type { Json } from './support/users'

// Outgoing webhooks, the subscription API (SPEC "Webhook subscription", DESIGN "Webhooks"): create
// with its one-time `whsec_` secret, list and read without it, edit, enable and disable, delete
// (idempotent), rotate the secret, reactivate, the deliveries list; workspace:write for every route;
// the validation of events and URLs. This server keeps the default URL rules (neither
// WEBHOOKS_ALLOW_HTTP nor WEBHOOKS_ALLOW_PRIVATE): https only, no private, loopback, link-local or
// metadata address. Deliveries themselves: webhooks-delivery.test.ts. The URLs here are never
// posted to: no event of their types is caused.
const clock = new ManualClock(Date.now())
let server: TestServer

beforeAll(async () => {
  server = await startTestServer({}, undefined, { clock })
})
afterAll(() => server.stop())

const api = (who: Caller, method: string, path: string, body?: unknown) =>
  callApi(server.baseUrl, who, method, path, body)
const hooksOf = (ws: string) => `/v1/workspaces/${ws}/webhooks`
const RECORD_KEYS = ['created_at', 'description', 'enabled', 'events', 'id', 'status', 'url']

async function workspaceWithOwner(): Promise<{ owner: Person; ws: string }> {
  const owner = await person(server.core)
  return { owner, ws: await activeWorkspace(server.core, owner.id) }
}

async function createHook(who: Caller, ws: string, body: Record<string, unknown> = {}) {
  const res = await api(who, 'POST', hooksOf(ws), {
    url: `https://hooks.example.com/${crypto.randomUUID()}`,
    events: ['tenant.created'],
    ...body,
  })
  expect(res.status).toBe(201)
  return res.body
}

/** A record as GET shows it: the creation answer without its secret. */
const withoutSecret = ({ secret: _secret, ...rest }: Json) => rest

/** A 422 in FastAPI's shape whose first entry is about `field` of the body. */
function expectInvalid(res: { status: number; body: Json }, field: string) {
  expect(res.status).toBe(422)
  expect(Array.isArray(res.body.detail)).toBe(true)
  const [first] = res.body.detail
  expect(first).toMatchObject({ msg: expect.any(String), type: expect.any(String) })
  expect(first.loc.slice(0, 2)).toEqual(['body', field])
}

describe('creating a webhook', () => {
  it('answers 201 with the record and a one-time whsec_ secret; list and read show it without the secret', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const url = 'https://hooks.example.com/gatehouse?team=7'
    const created = await api(owner, 'POST', hooksOf(ws), {
      url,
      events: ['tenant.created', 'tenant.deleted'],
      description: 'Tenant sync',
    })
    expect(created.status).toBe(201)
    expect(created.body).toEqual({
      id: expect.stringMatching(/^wh_[0-9A-Z]{26}$/),
      url,
      events: ['tenant.created', 'tenant.deleted'],
      description: 'Tenant sync',
      enabled: true,
      status: 'active',
      secret: expect.stringMatching(/^whsec_\S{16,}$/),
      created_at: isoTime(clock.now()),
    })
    const record = withoutSecret(created.body)

    const one = await api(owner, 'GET', `${hooksOf(ws)}/${created.body.id}`)
    expect(one.status).toBe(200)
    expect(one.body).toEqual(record)
    expect(JSON.stringify(one.body)).not.toContain(created.body.secret)

    const second = await createHook(owner, ws, { events: ['user.created'] })
    expect(second.secret).not.toBe(created.body.secret)
    const list = await api(owner, 'GET', hooksOf(ws))
    expect(list.status).toBe(200)
    expect(list.body.total).toBe(2)
    expect(list.body.items).toHaveLength(2)
    expect(list.body.items).toContainEqual(record)
    expect(list.body.items).toContainEqual(withoutSecret(second))
    for (const item of list.body.items) expect(Object.keys(item).sort()).toEqual(RECORD_KEYS)
    expect(JSON.stringify(list.body)).not.toContain('whsec_')

    // Another workspace lists only its own.
    const other = await workspaceWithOwner()
    expect((await api(other.owner, 'GET', hooksOf(other.ws))).body).toEqual({ items: [], total: 0 })
  })

  it('accepts every SPEC event type, and a description left out', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const all = [
      'user.created',
      'user.updated',
      'user.deleted',
      'session.started',
      'session.ended',
      'tenant.created',
      'tenant.deleted',
      'plan.changed',
      'subscription.past_due',
      'mau.threshold_warning',
      'signups_blocked',
    ]
    const created = await createHook(owner, ws, { events: all })
    expect(created.events).toEqual(all)
    expect(created.status).toBe('active')
  })

  it('refuses unknown or missing event types, and anything but an https URL, with 422', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const post = (body: Record<string, unknown>) => api(owner, 'POST', hooksOf(ws), body)
    const url = 'https://hooks.example.com/x'
    expectInvalid(await post({ url, events: [] }), 'events')
    expectInvalid(await post({ url, events: ['tenant.renamed'] }), 'events')
    expectInvalid(await post({ url, events: ['tenant.created', 'nope'] }), 'events')
    expectInvalid(await post({ url, events: 'tenant.created' }), 'events')
    expectInvalid(await post({ url }), 'events')
    for (const bad of ['not a url', '', 'hooks.example.com/x', 'https://', 'ftp://hooks.example.com/x'])
      expectInvalid(await post({ url: bad, events: ['tenant.created'] }), 'url')
    expectInvalid(await post({ events: ['tenant.created'] }), 'url')
    // Plain http only where the server allows it (WEBHOOKS_ALLOW_HTTP): not here.
    expectInvalid(await post({ url: 'http://hooks.example.com/x', events: ['tenant.created'] }), 'url')
    expect((await api(owner, 'GET', hooksOf(ws))).body).toEqual({ items: [], total: 0 })
  })

  it('refuses metadata, private, loopback and localhost addresses at creation with 422', async () => {
    const { owner, ws } = await workspaceWithOwner()
    for (const url of [
      'https://169.254.169.254/',
      'https://169.254.169.254/latest/meta-data/',
      'https://10.0.0.1/',
      'https://[::1]/',
      'https://127.0.0.1/',
      'https://localhost/',
      'https://localhost/hook',
      'https://localhost./hook',
    ]) {
      const res = await api(owner, 'POST', hooksOf(ws), { url, events: ['tenant.created'] })
      expect({ url, status: res.status }).toEqual({ url, status: 422 })
      expectInvalid(res, 'url')
    }
    expect((await api(owner, 'GET', hooksOf(ws))).body.total).toBe(0)
    // A public address literal is a URL like any other.
    expect((await createHook(owner, ws, { url: 'https://93.184.216.34/hook' })).url).toBe(
      'https://93.184.216.34/hook',
    )
  })

  it('refuses loopback and private addresses in their other spellings at creation with 422', async () => {
    const { owner, ws } = await workspaceWithOwner()
    for (const url of [
      'https://[::ffff:127.0.0.1]/',
      'https://[::ffff:a9fe:a9fe]/',
      'https://2130706433/',
      'https://0x7f.0.0.1/',
      'https://127.1/',
      'https://LOCALHOST/',
      'https://api.localhost/',
      'https://192.168.1.10/',
      'https://172.16.0.1/',
      'https://[fd00::1]/',
      'https://[fe80::1]/',
      'https://0.0.0.0/',
      // IPv4-compatible IPv6 (::/96), NAT64 and 6to4 holding a private or loopback IPv4 address.
      'https://[::127.0.0.1]/',
      'https://[::a9fe:a9fe]/',
      'https://[::10.0.0.1]/',
      'https://[::]/',
      'https://[64:ff9b::127.0.0.1]/',
      'https://[2002:a9fe:a9fe::]/',
    ]) {
      const res = await api(owner, 'POST', hooksOf(ws), { url, events: ['tenant.created'] })
      expect({ url, status: res.status }).toEqual({ url, status: 422 })
    }
  })
})

describe('editing a webhook', () => {
  it('changes url, events and description; enabled false shows status "disabled", true "active" again', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const created = await createHook(owner, ws, { description: 'first' })
    const path = `${hooksOf(ws)}/${created.id}`
    const changed = await api(owner, 'PATCH', path, {
      url: 'https://other.example.com/hook',
      events: ['tenant.deleted', 'user.created'],
      description: 'second',
    })
    expect(changed.status).toBe(200)
    expect(changed.body).toEqual({
      ...withoutSecret(created),
      url: 'https://other.example.com/hook',
      events: ['tenant.deleted', 'user.created'],
      description: 'second',
    })
    expect((await api(owner, 'GET', path)).body).toEqual(changed.body)

    const disabled = await api(owner, 'PATCH', path, { enabled: false })
    expect(disabled.status).toBe(200)
    expect(disabled.body).toEqual({ ...changed.body, enabled: false, status: 'disabled' })
    expect((await api(owner, 'GET', path)).body).toEqual(disabled.body)

    const enabled = await api(owner, 'PATCH', path, { enabled: true })
    expect(enabled.body).toEqual({ ...changed.body, enabled: true, status: 'active' })
  })

  it('validates a change as a creation: 422 for bad events or URL, and the record stays', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const created = await createHook(owner, ws)
    const path = `${hooksOf(ws)}/${created.id}`
    expectInvalid(await api(owner, 'PATCH', path, { events: [] }), 'events')
    expectInvalid(await api(owner, 'PATCH', path, { events: ['tenant.renamed'] }), 'events')
    expectInvalid(await api(owner, 'PATCH', path, { url: 'not a url' }), 'url')
    expectInvalid(await api(owner, 'PATCH', path, { url: 'http://hooks.example.com/x' }), 'url')
    expectInvalid(await api(owner, 'PATCH', path, { enabled: 'no' }), 'enabled')
    expect((await api(owner, 'GET', path)).body).toEqual(withoutSecret(created))
  })

  it('refuses a private or metadata URL in a change with 422', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const created = await createHook(owner, ws)
    const path = `${hooksOf(ws)}/${created.id}`
    for (const url of [
      'https://169.254.169.254/',
      'https://127.0.0.1/',
      'https://localhost/',
      'https://[::1]/',
    ])
      expectInvalid(await api(owner, 'PATCH', path, { url }), 'url')
    expect((await api(owner, 'GET', path)).body.url).toBe(created.url)
  })
})

describe('deleting a webhook', () => {
  it('answers 200 {"deleted": true}, also when it is already gone; then it is no more', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const created = await createHook(owner, ws)
    const kept = await createHook(owner, ws)
    const path = `${hooksOf(ws)}/${created.id}`
    for (let i = 0; i < 2; i++) {
      const res = await api(owner, 'DELETE', path)
      expect(res.status).toBe(200)
      expect(res.body).toEqual({ deleted: true })
    }
    expect((await api(owner, 'GET', path)).status).toBe(404)
    expect((await api(owner, 'PATCH', path, { description: 'x' })).status).toBe(404)
    expect((await api(owner, 'POST', `${path}/rotate-secret`)).status).toBe(404)
    expect((await api(owner, 'GET', hooksOf(ws))).body).toEqual({ items: [withoutSecret(kept)], total: 1 })
    // An id that never was.
    const never = await api(owner, 'DELETE', `${hooksOf(ws)}/wh_01J00000000000000000000000`)
    expect(never.status).toBe(200)
    expect(never.body).toEqual({ deleted: true })
  })
})

describe('rotating the secret, reactivating, deliveries', () => {
  it('rotate-secret answers 200 with the record and a new whsec_ secret; GET still shows none', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const created = await createHook(owner, ws)
    const path = `${hooksOf(ws)}/${created.id}`
    const rotated = await api(owner, 'POST', `${path}/rotate-secret`)
    expect(rotated.status).toBe(200)
    expect(rotated.body).toEqual({ ...created, secret: expect.stringMatching(/^whsec_\S{16,}$/) })
    expect(rotated.body.secret).not.toBe(created.secret)
    const again = await api(owner, 'POST', `${path}/rotate-secret`)
    expect(again.status).toBe(200)
    expect(new Set([created.secret, rotated.body.secret, again.body.secret]).size).toBe(3)
    const read = await api(owner, 'GET', path)
    expect(read.body).toEqual(withoutSecret(created))
    expect(JSON.stringify(read.body)).not.toContain('whsec_')
  })

  it('reactivate answers 200 with the record, status "active"', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const created = await createHook(owner, ws)
    const res = await api(owner, 'POST', `${hooksOf(ws)}/${created.id}/reactivate`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ ...withoutSecret(created), status: 'active' })
  })

  it('lists no deliveries for a new webhook, and answers 404 for an unknown delivery', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const created = await createHook(owner, ws)
    const path = `${hooksOf(ws)}/${created.id}`
    // A page of a list (DESIGN "Common"): items and total (next_cursor beside them on pageable lists).
    expect((await api(owner, 'GET', `${path}/deliveries`)).body).toMatchObject({ items: [], total: 0 })
    for (const status of ['queued', 'retrying', 'delivered', 'failed_permanent']) {
      const res = await api(owner, 'GET', `${path}/deliveries?status=${status}`)
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ items: [], total: 0 })
    }
    const unknown = await api(owner, 'POST', `${path}/deliveries/dlv_01J00000000000000000000000/redeliver`)
    expect(unknown.status).toBe(404)
    expect((await api(owner, 'GET', `${hooksOf(ws)}/wh_01J00000000000000000000000/deliveries`)).status).toBe(
      404,
    )
  })
})

describe('the deliveries list', () => {
  it('pages newest first with an opaque cursor, and refuses a limit or cursor it never handed out (422)', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const created = await createHook(owner, ws)
    const path = `${hooksOf(ws)}/${created.id}`
    const sent: string[] = []
    for (let i = 0; i < 3; i++) {
      const test = await api(owner, 'POST', `${path}/test`)
      expect(test.status).toBe(202)
      sent.push(test.body.delivery_id)
    }
    const first = await api(owner, 'GET', `${path}/deliveries?limit=2`)
    expect(first.status).toBe(200)
    expect(first.body.total).toBe(3)
    expect(first.body.items.map((d: Json) => d.id)).toEqual([sent[2], sent[1]])
    expect(first.body.next_cursor).toBeString()
    expect(first.body.next_cursor).not.toContain('dlv_')
    const second = await api(owner, 'GET', `${path}/deliveries?limit=2&cursor=${first.body.next_cursor}`)
    expect(second.body.items.map((d: Json) => d.id)).toEqual([sent[0]])
    expect(second.body.next_cursor).toBeNull()
    for (const [query, field] of [
      ['limit=0', 'limit'],
      ['limit=201', 'limit'],
      [`cursor=${sent[0]}`, 'cursor'],
    ]) {
      const res = await api(owner, 'GET', `${path}/deliveries?${query}`)
      expect([query, res.status]).toEqual([query, 422])
      expect(res.body.detail[0].loc).toEqual(['query', field])
    }
  })
})

describe('who may', () => {
  it('needs workspace:write on every route: a viewer and a workspace:read key get 403 and change nothing', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const created = await createHook(owner, ws)
    const path = `${hooksOf(ws)}/${created.id}`
    const routes: [string, string, unknown?][] = [
      ['POST', hooksOf(ws), { url: 'https://hooks.example.com/r', events: ['tenant.created'] }],
      ['GET', hooksOf(ws)],
      ['GET', path],
      ['PATCH', path, { description: 'read only' }],
      ['DELETE', path],
      ['POST', `${path}/rotate-secret`],
      ['POST', `${path}/reactivate`],
      ['POST', `${path}/test`],
      ['GET', `${path}/deliveries`],
      ['POST', `${path}/deliveries/dlv_01J00000000000000000000000/redeliver`],
    ]
    const viewer = await person(server.core, { ws, role: 'viewer' })
    const readKey = await keyCaller(server.core, ws, ['workspace:read'])
    for (const who of [viewer, readKey])
      for (const [method, route, body] of routes) {
        const res = await api(who, method, route, body)
        expect({ method, route, status: res.status }).toEqual({ method, route, status: 403 })
      }
    expect((await api(owner, 'GET', hooksOf(ws))).body).toEqual({ items: [withoutSecret(created)], total: 1 })
    expect((await api(owner, 'GET', `${path}/deliveries`)).body.total).toBe(0)

    // No caller at all: 401.
    const anonymous = await fetch(`${server.baseUrl}${hooksOf(ws)}`, {
      headers: { accept: 'application/json' },
    })
    expect(anonymous.status).toBe(401)
  })

  it('lets workspace:write (a developer, a workspace:write key) and workspace:admin manage webhooks', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const developer = await person(server.core, { ws, role: 'developer' })
    const admin = await person(server.core, { ws, role: 'admin' })
    const writeKey = await keyCaller(server.core, ws, ['workspace:write'])
    for (const who of [developer, admin, writeKey, owner]) {
      const created = await createHook(who, ws)
      const path = `${hooksOf(ws)}/${created.id}`
      expect((await api(who, 'GET', path)).status).toBe(200)
      expect((await api(who, 'GET', hooksOf(ws))).status).toBe(200)
      expect((await api(who, 'PATCH', path, { description: 'mine' })).body.description).toBe('mine')
      expect((await api(who, 'POST', `${path}/rotate-secret`)).status).toBe(200)
      expect((await api(who, 'POST', `${path}/reactivate`)).status).toBe(200)
      expect((await api(who, 'GET', `${path}/deliveries`)).status).toBe(200)
      expect((await api(who, 'DELETE', path)).body).toEqual({ deleted: true })
    }
  })

  it("answers 404 for another workspace's webhook on every route, and leaves it as it was", async () => {
    const a = await workspaceWithOwner()
    const b = await workspaceWithOwner()
    const theirs = await createHook(a.owner, a.ws)
    const foreign = `${hooksOf(b.ws)}/${theirs.id}`
    for (const [method, route, body] of [
      ['GET', foreign],
      ['PATCH', foreign, { url: 'https://attacker.example.com/', enabled: false }],
      ['POST', `${foreign}/rotate-secret`],
      ['POST', `${foreign}/reactivate`],
      ['POST', `${foreign}/test`],
      ['GET', `${foreign}/deliveries`],
    ] as [string, string, unknown?][]) {
      const res = await api(b.owner, method, route, body)
      expect({ method, route, status: res.status }).toEqual({ method, route, status: 404 })
    }
    // Deleting it from the other workspace deletes nothing (idempotent there: nothing of theirs was there).
    const deleted = await api(b.owner, 'DELETE', foreign)
    expect(deleted.status).toBe(200)
    expect(deleted.body).toEqual({ deleted: true })
    expect((await api(a.owner, 'GET', `${hooksOf(a.ws)}/${theirs.id}`)).body).toEqual(withoutSecret(theirs))
    // Nor may B reach A's workspace routes at all.
    expect((await api(b.owner, 'GET', hooksOf(a.ws))).status).toBe(404)
    expect((await api(b.owner, 'GET', `${hooksOf(a.ws)}/${theirs.id}`)).status).toBe(404)
  })
})
