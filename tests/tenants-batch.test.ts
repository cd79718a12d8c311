import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { auditLog } from '../src/audit/schema'
import { events } from '../src/events/schema'
import { ManualClock } from '../src/shared/clock'
import { type Caller, callApi, credentials, type Person, person } from './support/callers'
import { activeWorkspace } from './support/instances'
import { startTestServer, type TestServer } from './support/server'

// Issue 26, item 3: POST /v1/workspaces/{id}/tenants:batch (SPEC "Machine keys, workspace webhooks,
// batch" and "Limits", DESIGN "Tenants"): 1..100 TenantCreate items, each created or refused on its
// own with its reason; 5 batches a minute per workspace, counted apart from the control-plane
// limit; and the literal colon of its path, which Elysia's router would read as a parameter.
const MINUTE = 60_000
const clock = new ManualClock(Date.now())
let server: TestServer

beforeAll(async () => {
  server = await startTestServer({ RATE_LIMIT_BATCH_PER_MINUTE: '5' }, undefined, { clock })
})
afterAll(() => server.stop())
// Each test starts minutes after the last: every batch bucket is full again.
beforeEach(() => clock.advance(10 * MINUTE))

const api = (who: Caller, method: string, path: string, body?: unknown) =>
  callApi(server.baseUrl, who, method, path, body)
const batchOf = (ws: string) => `/v1/workspaces/${ws}/tenants:batch`
const items = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => ({ slug: `t-${from + i}`, name: `Tenant ${from + i}` }))

async function workspaceWithOwner(): Promise<{ owner: Person; ws: string }> {
  const owner = await person(server.core)
  return { owner, ws: await activeWorkspace(server.core, owner.id) }
}

/** How many events of `type`, and audit entries of the same action, the workspace has. */
async function recorded(ws: string, type: string) {
  const emitted = await server.core.db
    .select()
    .from(events)
    .where(and(eq(events.workspaceId, ws), eq(events.type, type)))
  const audited = await server.core.db
    .select()
    .from(auditLog)
    .where(and(eq(auditLog.workspaceId, ws), eq(auditLog.action, type)))
  return { events: emitted.length, audit: audited.length, tenantIds: new Set(emitted.map((e) => e.tenantId)) }
}

describe('the batch route', () => {
  it('is routed at the literal /tenants:batch, and only there; /tenants/{tenant_id} still is', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const done = await api(owner, 'POST', batchOf(ws), [{ slug: 'acme', name: 'Acme' }])
    expect(done.status).toBe(200)
    const acme = done.body.results[0].tenant
    expect((await api(owner, 'GET', `/v1/workspaces/${ws}/tenants/${acme.id}`)).body).toEqual(acme)
    // Elysia would route these to the batch too (a colon reads as a parameter): they are no route.
    for (const path of ['tenantsbatch', 'tenants:other', 'tenants%3Abatch', 'tenants:batch/'])
      expect(
        (await api(owner, 'POST', `/v1/workspaces/${ws}/${path}`, [{ slug: 'x', name: 'X' }])).status,
      ).toBe(404)
    // …and the plain collection still creates one tenant.
    expect(
      (await api(owner, 'POST', `/v1/workspaces/${ws}/tenants`, { slug: 'one', name: 'One' })).status,
    ).toBe(201)
    // The API reference names it as SPEC does.
    const doc = (await (await fetch(`${server.baseUrl}/openapi.json`)).json()) as {
      paths: Record<string, { post?: { parameters: { name: string }[] } }>
    }
    const batch = doc.paths['/v1/workspaces/{workspace_id}/tenants:batch']?.post
    expect(batch?.parameters.map((p) => p.name)).toEqual(['workspace_id'])
  })

  it('creates 100 tenants in one call, with 100 tenant.created events and audit entries', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const res = await api(owner, 'POST', batchOf(ws), items(100))
    expect(res.status).toBe(200)
    expect(res.body.created).toBe(100)
    expect(res.body.failed).toBe(0)
    expect(res.body.results.map((r: { index: number }) => r.index)).toEqual([...Array(100).keys()])
    expect(res.body.results[42]).toEqual({
      index: 42,
      status: 'created',
      tenant: {
        id: expect.stringMatching(/^ten_/),
        slug: 't-42',
        name: 'Tenant 42',
        metadata: {},
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    })
    expect((await api(owner, 'GET', `/v1/workspaces/${ws}/tenants?limit=1`)).body.total).toBe(100)
    const created = await recorded(ws, 'tenant.created')
    expect(created.events).toBe(100)
    expect(created.audit).toBe(100)
    // Each event names its tenant.
    expect(created.tenantIds).toEqual(
      new Set<string | null>(res.body.results.map((r: { tenant: { id: string } }) => r.tenant.id)),
    )
  })

  it('answers 422 to 0 and to 101 items, and to a body that is not an array', async () => {
    const { owner, ws } = await workspaceWithOwner()
    for (const body of [[], items(101), { slug: 'a', name: 'A' }]) {
      const res = await api(owner, 'POST', batchOf(ws), body)
      expect(res.status).toBe(422)
      expect(res.body.detail[0].loc).toEqual(['body'])
    }
    expect((await api(owner, 'GET', `/v1/workspaces/${ws}/tenants`)).body.total).toBe(0)
  })

  it('creates the 97 good items of 100 and reports the 3 bad ones with their index and reason', async () => {
    const { owner, ws } = await workspaceWithOwner()
    expect(
      (await api(owner, 'POST', `/v1/workspaces/${ws}/tenants`, { slug: 'taken', name: 'Taken' })).status,
    ).toBe(201)
    const body: unknown[] = items(100)
    body[3] = { slug: 'Bad_Slug', name: 'Bad slug' }
    body[50] = { slug: 'long-name', name: 'n'.repeat(201) }
    body[99] = { slug: 'taken', name: 'Already there' }
    const res = await api(owner, 'POST', batchOf(ws), body)
    expect(res.status).toBe(200)
    expect(res.body.created).toBe(97)
    expect(res.body.failed).toBe(3)
    const errors = res.body.results.filter((r: { status: string }) => r.status === 'error')
    expect(errors).toEqual([
      {
        index: 3,
        status: 'error',
        error: { type: 'string_pattern_mismatch', msg: expect.any(String), loc: ['body', 3, 'slug'] },
      },
      {
        index: 50,
        status: 'error',
        error: { type: 'string_too_long', msg: expect.any(String), loc: ['body', 50, 'name'] },
      },
      {
        index: 99,
        status: 'error',
        error: {
          type: 'slug_taken',
          msg: 'A tenant with this slug already exists in this workspace',
          loc: ['body', 99, 'slug'],
        },
      },
    ])
    expect((await api(owner, 'GET', `/v1/workspaces/${ws}/tenants?limit=1`)).body.total).toBe(98)
    expect((await recorded(ws, 'tenant.created')).events).toBe(98)
  })

  it('refuses a slug repeated inside the batch on its later items, and every other bad item on its own', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const res = await api(owner, 'POST', batchOf(ws), [
      { slug: 'acme', name: 'First' },
      { slug: 'acme', name: 'Second' },
      'not an object',
      { slug: 'no-name' },
      { slug: 'blank', name: '   ' },
      { slug: 'heavy', name: 'Heavy', metadata: { blob: 'x'.repeat(5000) } },
      { slug: 'listy', name: 'Listy', metadata: [1] },
      { slug: 'trimmed', name: `  ${'n'.repeat(200)}  ` },
      { slug: 'extra', name: 'Extra', id: 'ten_mine' },
    ])
    expect(res.status).toBe(200)
    expect(
      res.body.results.map((r: { status: string; error?: { type: string; loc: unknown[] } }) =>
        r.status === 'created' ? 'created' : `${r.error!.type} ${JSON.stringify(r.error!.loc)}`,
      ),
    ).toEqual([
      'created',
      'slug_repeated ["body",1,"slug"]',
      'model_type ["body",2]',
      'missing ["body",3,"name"]',
      'string_too_short ["body",4,"name"]',
      'metadata_too_large ["body",5,"metadata"]',
      'metadata_not_object ["body",6,"metadata"]',
      'created',
      'created',
    ])
    expect(res.body.results[0].tenant.name).toBe('First')
    expect(res.body.results[7].tenant.name).toBe('n'.repeat(200))
    // An unknown field is dropped, as on the single route.
    expect(res.body.results[8].tenant.id).not.toBe('ten_mine')
  })

  it('takes workspace:write: a viewer gets 403', async () => {
    const { ws } = await workspaceWithOwner()
    const viewer = await person(server.core, { ws, role: 'viewer' })
    expect((await api(viewer, 'POST', batchOf(ws), items(1))).status).toBe(403)
  })
})

describe('the batch rate limit', () => {
  it('refuses the 6th batch of a workspace within a minute with 429 and Retry-After; other calls and workspaces go on', async () => {
    const { owner, ws } = await workspaceWithOwner()
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${server.baseUrl}${batchOf(ws)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...credentials(owner) },
        body: JSON.stringify(items(100, i * 100)),
      })
      expect(res.status).toBe(200)
      expect(res.headers.get('x-ratelimit-limit')).toBe('5')
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(4 - i))
    }
    const sixth = await api(owner, 'POST', batchOf(ws), items(1, 900))
    expect(sixth.status).toBe(429)
    expect(Number(sixth.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(sixth.body.detail).toContain('5 requests per minute per workspace (batch)')
    // 500 creations, none from the refused batch.
    expect((await api(owner, 'GET', `/v1/workspaces/${ws}/tenants?limit=1`)).body.total).toBe(500)
    // Counted apart: the workspace's other calls, and another workspace's batches, are not limited by it.
    expect(
      (await api(owner, 'POST', `/v1/workspaces/${ws}/tenants`, { slug: 'single', name: 'S' })).status,
    ).toBe(201)
    const other = await workspaceWithOwner()
    expect((await api(other.owner, 'POST', batchOf(other.ws), items(1))).status).toBe(200)
    // The window reopens with time.
    clock.advance(MINUTE)
    expect((await api(owner, 'POST', batchOf(ws), items(1, 900))).status).toBe(200)
  })
})
