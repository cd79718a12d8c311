import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { and, asc, eq } from 'drizzle-orm'
import { auditLog } from '../src/audit/schema'
import { events } from '../src/events/schema'
import { tenantInvitations, tenantMembers } from '../src/features/tenants/schema'
import { signUp } from '../src/identity'
import { ManualClock } from '../src/shared/clock'
import { type Caller, callApi, credentials, type Person, person } from './support/callers'
import { activeWorkspace } from './support/instances'
import { startTestServer, type TestServer } from './support/server'
import type { Json } from './support/users'

// Issue 26, item 1: a workspace's tenants through the API (DESIGN "Tenants"): create, list with
// pages and a prefix search, read, edit, delete; their members (users of the workspace's
// instance); the tenant.created and tenant.deleted events, the audit rows of every change, and a
// deleted user leaving their tenants.
const clock = new ManualClock(Date.now())
let server: TestServer

beforeAll(async () => {
  server = await startTestServer({}, undefined, { clock })
})
afterAll(() => server.stop())

const api = (who: Caller, method: string, path: string, body?: unknown) =>
  callApi(server.baseUrl, who, method, path, body)
const tenantsOf = (ws: string) => `/v1/workspaces/${ws}/tenants`

async function workspaceWithOwner(): Promise<{ owner: Person; ws: string }> {
  const owner = await person(server.core)
  return { owner, ws: await activeWorkspace(server.core, owner.id) }
}

async function createTenant(who: Caller, ws: string, body: Record<string, unknown>) {
  const res = await api(who, 'POST', tenantsOf(ws), body)
  expect(res.status).toBe(201)
  return res.body
}

/** A user of the workspace's identity instance. */
const endUser = (ws: string, email = `u-${crypto.randomUUID()}@example.com`) =>
  signUp(server.core, ws, { email, password: 'a long password 1', name: 'End User' })

const eventsOf = async (ws: string) =>
  (
    await server.core.db
      .select()
      .from(events)
      .where(eq(events.workspaceId, ws))
      .orderBy(asc(events.createdAt), asc(events.id))
  ).map((e) => ({ type: e.type, tenantId: e.tenantId, data: e.data }))

const auditOf = async (ws: string) =>
  (
    await server.core.db
      .select()
      .from(auditLog)
      .where(eq(auditLog.workspaceId, ws))
      .orderBy(asc(auditLog.at), asc(auditLog.id))
  ).map((r) => ({ actor: r.actor, action: r.action, target: r.targetId, changes: r.changes }))

describe('creating a tenant', () => {
  it('answers 201 with TenantOut, the name trimmed, and emits tenant.created with its tenant_id', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const created = await createTenant(owner, ws, {
      slug: 'acme',
      name: '  Acme Inc.  ',
      metadata: { plan: 'gold', seats: 12 },
    })
    expect(created).toEqual({
      id: expect.stringMatching(/^ten_[0-9A-Z]{26}$/),
      slug: 'acme',
      name: 'Acme Inc.',
      metadata: { plan: 'gold', seats: 12 },
      created_at: new Date(clock.now()).toISOString(),
      updated_at: new Date(clock.now()).toISOString(),
    })
    expect((await api(owner, 'GET', `${tenantsOf(ws)}/${created.id}`)).body).toEqual(created)
    expect(await eventsOf(ws)).toEqual([
      {
        type: 'tenant.created',
        tenantId: created.id,
        data: { tenant_id: created.id, slug: 'acme', name: 'Acme Inc.' },
      },
    ])
    expect(await auditOf(ws)).toEqual([
      {
        actor: `user:${owner.id}`,
        action: 'tenant.created',
        target: created.id,
        changes: {
          slug: { to: 'acme' },
          name: { to: 'Acme Inc.' },
          metadata: { to: { plan: 'gold', seats: 12 } },
        },
      },
    ])
    // Metadata is optional: an empty object.
    expect((await createTenant(owner, ws, { slug: 'b', name: 'B' })).metadata).toEqual({})
  })

  it('measures the name after trimming it: 200 characters with spaces around them are accepted', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const name = 'n'.repeat(200)
    expect((await createTenant(owner, ws, { slug: 'long', name: `  ${name}  ` })).name).toBe(name)
    const tooLong = await api(owner, 'POST', tenantsOf(ws), { slug: 'longer', name: `${name}n` })
    expect(tooLong.status).toBe(422)
    expect(tooLong.body.detail[0]).toMatchObject({ loc: ['body', 'name'], type: 'string_too_long' })
    const blank = await api(owner, 'POST', tenantsOf(ws), { slug: 'blank', name: '   ' })
    expect(blank.status).toBe(422)
    expect(blank.body.detail[0].loc).toEqual(['body', 'name'])
  })

  it('refuses a slug outside the pattern (exact: upper case is not lowered) and metadata over 4 KiB with 422', async () => {
    const { owner, ws } = await workspaceWithOwner()
    for (const slug of ['Acme', '-acme', 'acme-', 'ac_me', '', 'a'.repeat(64), ' acme']) {
      const res = await api(owner, 'POST', tenantsOf(ws), { slug, name: 'X' })
      expect(res.status).toBe(422)
      expect(res.body.detail[0].loc).toEqual(['body', 'slug'])
    }
    expect((await createTenant(owner, ws, { slug: 'a'.repeat(63), name: 'X' })).slug).toHaveLength(63)
    expect((await createTenant(owner, ws, { slug: '7', name: 'X' })).slug).toBe('7')
    const heavy = await api(owner, 'POST', tenantsOf(ws), {
      slug: 'heavy',
      name: 'X',
      metadata: { blob: 'x'.repeat(4096) },
    })
    expect(heavy.status).toBe(422)
    expect(heavy.body.detail[0]).toMatchObject({ loc: ['body', 'metadata'], type: 'metadata_too_large' })
    // An unknown field is dropped (as on every route), never stored.
    const extra = await api(owner, 'POST', tenantsOf(ws), { slug: 'x', name: 'X', id: 'ten_mine' })
    expect(extra.body.id).not.toBe('ten_mine')
    // null is no metadata: an empty object.
    expect((await createTenant(owner, ws, { slug: 'null', name: 'N', metadata: null })).metadata).toEqual({})
    for (const metadata of [[1], 'text', 7, true]) {
      const notObject = await api(owner, 'POST', tenantsOf(ws), { slug: 'y', name: 'Y', metadata })
      expect(notObject.status).toBe(422)
      expect(notObject.body.detail[0]).toMatchObject({
        loc: ['body', 'metadata'],
        type: 'metadata_not_object',
      })
    }
  })

  it('answers 409 to a slug the workspace has, even when ten creations race; another workspace may use it', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const statuses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        api(owner, 'POST', tenantsOf(ws), { slug: 'race', name: `R${i}` }),
      ),
    )
    expect(statuses.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(409)])
    const clash = statuses.find((r) => r.status === 409)!
    expect(clash.body).toEqual({ detail: 'A tenant with this slug already exists in this workspace' })
    expect((await eventsOf(ws)).length).toBe(1)
    const other = await workspaceWithOwner()
    await createTenant(other.owner, other.ws, { slug: 'race', name: 'Elsewhere' })
  })

  it('takes workspace:write: a viewer reads the list but gets 403 on a creation', async () => {
    const { owner, ws } = await workspaceWithOwner()
    await createTenant(owner, ws, { slug: 'acme', name: 'Acme' })
    const viewer = await person(server.core, { ws, role: 'viewer' })
    expect((await api(viewer, 'GET', tenantsOf(ws))).body.total).toBe(1)
    const refused = await api(viewer, 'POST', tenantsOf(ws), { slug: 'v', name: 'V' })
    expect(refused.status).toBe(403)
    const developer = await person(server.core, { ws, role: 'developer' })
    await createTenant(developer, ws, { slug: 'dev', name: 'Dev' })
  })
})

describe('listing tenants', () => {
  it('pages in creation order with limit and cursor, and counts every match in total', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const made = []
    for (const slug of ['a1', 'a2', 'a3', 'a4', 'a5'])
      made.push(await createTenant(owner, ws, { slug, name: slug }))
    const first = await api(owner, 'GET', `${tenantsOf(ws)}?limit=2`)
    expect(first.body.items.map((t: { slug: string }) => t.slug)).toEqual(['a1', 'a2'])
    expect(first.body.total).toBe(5)
    const second = await api(owner, 'GET', `${tenantsOf(ws)}?limit=2&cursor=${first.body.next_cursor}`)
    expect(second.body.items.map((t: { slug: string }) => t.slug)).toEqual(['a3', 'a4'])
    const last = await api(owner, 'GET', `${tenantsOf(ws)}?limit=2&cursor=${second.body.next_cursor}`)
    expect(last.body).toEqual({ items: [made[4]], total: 5, next_cursor: null })
    expect((await api(owner, 'GET', tenantsOf(ws))).body.items).toHaveLength(5)
  })

  it('searches by slug or name prefix, in any case, with % and _ matching literally', async () => {
    const { owner, ws } = await workspaceWithOwner()
    await createTenant(owner, ws, { slug: 'acme', name: 'Acme Inc.' })
    await createTenant(owner, ws, { slug: 'globex', name: 'Globex' })
    await createTenant(owner, ws, { slug: 'initech', name: 'ACME_Initech' })
    await createTenant(owner, ws, { slug: 'umbrella', name: '100% Umbrella' })
    const search = async (q: string) =>
      (await api(owner, 'GET', `${tenantsOf(ws)}?q=${encodeURIComponent(q)}`)).body
    expect((await search('acme')).items.map((t: { slug: string }) => t.slug)).toEqual(['acme', 'initech'])
    expect((await search('ACME_')).items.map((t: { slug: string }) => t.slug)).toEqual(['initech'])
    expect((await search('glo')).total).toBe(1)
    expect((await search('init')).total).toBe(1)
    expect((await search('100%')).total).toBe(1)
    expect((await search('%')).total).toBe(0)
    expect((await search('zzz')).items).toEqual([])
  })

  it('answers 422 to a limit outside 1..200 and a cursor it never handed out', async () => {
    const { owner, ws } = await workspaceWithOwner()
    for (const limit of ['0', '201', 'x']) {
      const res = await api(owner, 'GET', `${tenantsOf(ws)}?limit=${limit}`)
      expect(res.status).toBe(422)
      expect(res.body.detail[0].loc).toEqual(['query', 'limit'])
    }
    const cursor = await api(owner, 'GET', `${tenantsOf(ws)}?cursor=not!a!cursor`)
    expect(cursor.status).toBe(422)
    expect(cursor.body.detail[0].loc).toEqual(['query', 'cursor'])
  })
})

describe('changing and deleting a tenant', () => {
  it("changes a tenant's name and metadata (audited with both values); the slug never changes", async () => {
    const { owner, ws } = await workspaceWithOwner()
    const acme = await createTenant(owner, ws, { slug: 'acme', name: 'Acme', metadata: { plan: 'free' } })
    clock.advance(60_000)
    const patched = await api(owner, 'PATCH', `${tenantsOf(ws)}/${acme.id}`, {
      name: ' Acme Corp ',
      metadata: { plan: 'gold' },
    })
    expect(patched.status).toBe(200)
    expect(patched.body).toEqual({
      ...acme,
      name: 'Acme Corp',
      metadata: { plan: 'gold' },
      updated_at: new Date(clock.now()).toISOString(),
    })
    // A slug is not a field of the update: it is dropped, and the tenant keeps its own.
    const slug = await api(owner, 'PATCH', `${tenantsOf(ws)}/${acme.id}`, { slug: 'other' })
    expect(slug.body.slug).toBe('acme')
    // The same values change nothing and record nothing.
    expect((await api(owner, 'PATCH', `${tenantsOf(ws)}/${acme.id}`, { name: 'Acme Corp' })).status).toBe(200)
    const audit = await auditOf(ws)
    expect(audit.map((a) => a.action)).toEqual(['tenant.created', 'tenant.updated'])
    expect(audit[1]!.changes).toEqual({
      name: { from: 'Acme', to: 'Acme Corp' },
      metadata: { from: { plan: 'free' }, to: { plan: 'gold' } },
    })
    expect((await api(owner, 'PATCH', `${tenantsOf(ws)}/ten_unknown`, { name: 'X' })).status).toBe(404)
  })

  it('deletes a tenant with its memberships and invitations (tenant.deleted), idempotently; its slug is free again', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const acme = await createTenant(owner, ws, { slug: 'acme', name: 'Acme' })
    const user = await endUser(ws)
    expect(
      (await api(owner, 'POST', `${tenantsOf(ws)}/${acme.id}/members`, { user_id: user.id })).status,
    ).toBe(201)
    const invited = await endUser(ws)
    expect(
      (await api(owner, 'POST', `${tenantsOf(ws)}/${acme.id}/members/invite`, { email: invited.email }))
        .status,
    ).toBe(202)
    for (let i = 0; i < 2; i++) {
      const gone = await api(owner, 'DELETE', `${tenantsOf(ws)}/${acme.id}`)
      expect(gone.status).toBe(200)
      expect(gone.body).toEqual({ deleted: true })
    }
    expect((await api(owner, 'GET', `${tenantsOf(ws)}/${acme.id}`)).status).toBe(404)
    expect(
      await server.core.db.select().from(tenantMembers).where(eq(tenantMembers.tenantId, acme.id)),
    ).toEqual([])
    expect(
      await server.core.db.select().from(tenantInvitations).where(eq(tenantInvitations.tenantId, acme.id)),
    ).toEqual([])
    const tenantEvents = (await eventsOf(ws)).filter((e) => e.type.startsWith('tenant.'))
    expect(tenantEvents.map((e) => [e.type, e.tenantId, e.data])).toEqual([
      ['tenant.created', acme.id, { tenant_id: acme.id, slug: 'acme', name: 'Acme' }],
      ['tenant.deleted', acme.id, { tenant_id: acme.id, slug: 'acme', name: 'Acme' }],
    ])
    expect((await auditOf(ws)).map((a) => a.action)).toEqual([
      'tenant.created',
      'tenant.member_added',
      'tenant.member_invited',
      'tenant.deleted',
    ])
    await createTenant(owner, ws, { slug: 'acme', name: 'Acme again' })
    // A viewer may not delete.
    const viewer = await person(server.core, { ws, role: 'viewer' })
    expect((await api(viewer, 'DELETE', `${tenantsOf(ws)}/${acme.id}`)).status).toBe(403)
  })
})

describe("a tenant's members", () => {
  it('adds users of the workspace, lists and reads them, and removes them idempotently, each audited', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const acme = await createTenant(owner, ws, { slug: 'acme', name: 'Acme' })
    const members = `${tenantsOf(ws)}/${acme.id}/members`
    const ada = await endUser(ws, 'ada@example.com')
    const bob = await endUser(ws, 'bob@example.com')
    const added = await api(owner, 'POST', members, { user_id: ada.id })
    expect(added.status).toBe(201)
    expect(added.body).toEqual({
      user_id: ada.id,
      email: 'ada@example.com',
      name: 'End User',
      added_at: new Date(clock.now()).toISOString(),
    })
    expect((await api(owner, 'POST', members, { user_id: bob.id })).status).toBe(201)
    // Twice is a conflict, as for workspace members.
    const again = await api(owner, 'POST', members, { user_id: ada.id })
    expect(again.status).toBe(409)
    expect(again.body).toEqual({ detail: 'This user is already a member of the tenant' })

    const listed = await api(owner, 'GET', `${members}?limit=1`)
    expect(listed.body.total).toBe(2)
    expect(listed.body.items).toEqual([added.body])
    const next = await api(owner, 'GET', `${members}?limit=1&cursor=${listed.body.next_cursor}`)
    expect(next.body.items.map((m: { email: string }) => m.email)).toEqual(['bob@example.com'])
    expect(next.body.next_cursor).toBeNull()
    expect((await api(owner, 'GET', `${members}/${ada.id}`)).body).toEqual(added.body)

    for (let i = 0; i < 2; i++) {
      const removed = await api(owner, 'DELETE', `${members}/${ada.id}`)
      expect(removed.status).toBe(200)
      expect(removed.body).toEqual({ deleted: true })
    }
    expect((await api(owner, 'GET', `${members}/${ada.id}`)).status).toBe(404)
    const audit = (await auditOf(ws)).filter((a) => a.action.startsWith('tenant.member'))
    expect(audit).toEqual([
      {
        actor: `user:${owner.id}`,
        action: 'tenant.member_added',
        target: acme.id,
        changes: { user_id: { to: ada.id } },
      },
      {
        actor: `user:${owner.id}`,
        action: 'tenant.member_added',
        target: acme.id,
        changes: { user_id: { to: bob.id } },
      },
      {
        actor: `user:${owner.id}`,
        action: 'tenant.member_removed',
        target: acme.id,
        changes: { user_id: { from: ada.id } },
      },
    ])
  })

  it('answers 404 for a user the workspace does not have (one of another workspace included) and for an unknown tenant', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const acme = await createTenant(owner, ws, { slug: 'acme', name: 'Acme' })
    const elsewhere = await endUser(await activeWorkspace(server.core, owner.id))
    for (const user_id of ['usr_nobody', elsewhere.id]) {
      const res = await api(owner, 'POST', `${tenantsOf(ws)}/${acme.id}/members`, { user_id })
      expect(res.status).toBe(404)
      expect(res.body).toEqual({ detail: 'No user of this workspace has this id' })
    }
    const user = await endUser(ws)
    const unknown = await api(owner, 'POST', `${tenantsOf(ws)}/ten_nope/members`, { user_id: user.id })
    expect(unknown.status).toBe(404)
    expect(unknown.body).toEqual({ detail: 'Tenant not found' })
  })

  it('loses a user deleted from the workspace: their memberships go with them', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const acme = await createTenant(owner, ws, { slug: 'acme', name: 'Acme' })
    const beta = await createTenant(owner, ws, { slug: 'beta', name: 'Beta' })
    const gone = await endUser(ws)
    const stays = await endUser(ws)
    for (const tenant of [acme, beta])
      for (const user of [gone, stays])
        await api(owner, 'POST', `${tenantsOf(ws)}/${tenant.id}/members`, { user_id: user.id })
    expect((await api(owner, 'DELETE', `/v1/workspaces/${ws}/users/${gone.id}`)).status).toBe(200)
    const rows = await server.core.db
      .select({ userId: tenantMembers.userId })
      .from(tenantMembers)
      .where(and(eq(tenantMembers.workspaceId, ws)))
    expect(rows.map((r) => r.userId)).toEqual([stays.id, stays.id])
    expect((await api(owner, 'GET', `${tenantsOf(ws)}/${acme.id}/members`)).body.total).toBe(1)
  })
})

describe('hostile input', () => {
  it('refuses metadata nested deeper than 16 at once (422), on create, update and in a batch item', async () => {
    const { owner, ws } = await workspaceWithOwner()
    // 100,000 levels: JSON.stringify would overflow its stack (a second of the node's time) on it.
    const deep = `{"slug":"deep","name":"Deep","metadata":{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`
    const res = await fetch(`${server.baseUrl}${tenantsOf(ws)}`, {
      method: 'POST',
      headers: { ...credentials(owner), 'content-type': 'application/json', accept: 'application/json' },
      body: deep,
    })
    expect(res.status).toBe(422)
    expect(((await res.json()) as Json).detail[0].loc).toEqual(['body', 'metadata'])
    const nested = (n: number): unknown => (n === 0 ? 1 : { a: nested(n - 1) })
    const ok = await createTenant(owner, ws, { slug: 'ok', name: 'Ok', metadata: nested(15) })
    const patched = await api(owner, 'PATCH', `${tenantsOf(ws)}/${ok.id}`, { metadata: nested(17) })
    expect(patched.status).toBe(422)
    const batch = await api(owner, 'POST', `${tenantsOf(ws)}:batch`, [
      { slug: 'fine', name: 'Fine' },
      { slug: 'nested', name: 'Nested', metadata: nested(40) },
    ])
    expect(batch.status).toBe(200)
    expect(batch.body).toMatchObject({ created: 1, failed: 1 })
    expect(batch.body.results[1]).toMatchObject({
      index: 1,
      status: 'error',
      error: { type: 'metadata_too_large' },
    })
  })

  it('refuses a NUL in a search or a member id with 422, on both stores', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const tenant = await createTenant(owner, ws, { slug: 'acme', name: 'Acme' })
    expect((await api(owner, 'GET', `${tenantsOf(ws)}?q=%00`)).status).toBe(422)
    expect((await api(owner, 'GET', `/v1/workspaces/${ws}/users?q=a%00`)).status).toBe(422)
    expect(
      (await api(owner, 'POST', `${tenantsOf(ws)}/${tenant.id}/members`, { user_id: 'usr_\u0000' })).status,
    ).toBe(422)
  })
})
