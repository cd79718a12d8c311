import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { and, eq } from 'drizzle-orm'
import { events } from '../src/events/schema'
import { ownerEmails } from '../src/features/workspaces/service'
import { isoTime, ManualClock } from '../src/shared/clock'
import { type Caller, callApi, type Person, person } from './support/callers'
import { activeWorkspace } from './support/instances'
import { startTestServer, type TestServer } from './support/server'
import { type SmtpSink, startSmtpServer } from './support/smtp'
import type { Json } from './support/users'
import {
  hmacHex,
  parseSignature,
  type Received,
  type Receiver,
  startReceiver,
  verifySignature,
} from './support/webhook-receiver'

// Outgoing webhooks on the wire (SPEC "Events" and "Webhook delivery", DESIGN "Webhooks" and its
// retry schedule): a receiver on 127.0.0.1 gets each event its endpoint subscribed to as a signed
// POST, checked with a verifier written from SPEC alone (HMAC-SHA256 over `<t>.<raw body>`, keyed
// with the whole `whsec_` string, 300 s window); retries at 1 m … 48 h from the first failure, then
// failed_permanent and redelivery; the pause after 24 h down and reactivation; both secrets signing
// for 24 h after a rotation; the 100 deliveries a minute per endpoint. All on the server's
// ManualClock: the test turns it, then `tick()` runs what fell due. The server allows http and
// private addresses (WEBHOOKS_ALLOW_HTTP, WEBHOOKS_ALLOW_PRIVATE) so it may post to the receiver.
const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR
/** DESIGN: after a failure, attempts at these offsets from the first failed attempt. */
const RETRY_OFFSETS = [MINUTE, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 2 * DAY]

const clock = new ManualClock(Date.now())
let server: TestServer
let receiver: Receiver
let smtp: SmtpSink
/** Every secret this file was given: none may ever be in a delivered body. */
const secrets: string[] = []

beforeAll(async () => {
  receiver = startReceiver()
  smtp = await startSmtpServer()
  server = await startTestServer(
    { WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true', SMTP_URL: smtp.url },
    undefined,
    { clock },
  )
})
afterAll(async () => {
  await server.stop()
  await receiver.stop()
  await smtp.close()
})
// Each test starts days after the last: past every retry the tests before left behind (each to its
// own receiver path, which no other test reads).
beforeEach(() => clock.advance(3 * DAY))

const api = (who: Caller, method: string, path: string, body?: unknown) =>
  callApi(server.baseUrl, who, method, path, body)
const hooksOf = (ws: string) => `/v1/workspaces/${ws}/webhooks`
const nowSeconds = () => Math.floor(clock.now() / 1000)

/** What the job timers would do by now: run every job due, and what those jobs enqueued. */
async function deliver() {
  await server.tick()
  await server.tick()
}

/** `deliver()` every 250 ms of the clock for `ms`: deliveries waiting for a free in-flight slot go on. */
async function deliverFor(ms: number) {
  for (let t = 0; t < ms; t += 250) {
    await deliver()
    clock.advance(250)
  }
}

async function workspaceWithOwner(): Promise<{ owner: Person; ws: string }> {
  const owner = await person(server.core)
  return { owner, ws: await activeWorkspace(server.core, owner.id) }
}

/** An endpoint of the receiver (a path of its own) subscribed to `types`; its creation answer. */
async function subscribe(who: Caller, ws: string, types: string[]) {
  const res = await api(who, 'POST', hooksOf(ws), { url: receiver.url(), events: types })
  expect(res.status).toBe(201)
  expect(res.body.secret).toMatch(/^whsec_/)
  secrets.push(res.body.secret)
  return res.body as { id: string; url: string; secret: string; [k: string]: Json }
}

async function createTenant(who: Caller, ws: string, slug: string) {
  const res = await api(who, 'POST', `/v1/workspaces/${ws}/tenants`, { slug, name: slug.toUpperCase() })
  expect(res.status).toBe(201)
  return res.body
}

async function deliveriesOf(who: Caller, ws: string, hookId: string, status?: string) {
  const res = await api(who, 'GET', `${hooksOf(ws)}/${hookId}/deliveries${status ? `?status=${status}` : ''}`)
  expect(res.status).toBe(200)
  return res.body as { items: Json[]; total: number }
}

async function deliveryOf(who: Caller, ws: string, hookId: string, eventId: string) {
  const { items } = await deliveriesOf(who, ws, hookId)
  const found = items.filter((d) => d.event_id === eventId)
  expect(found).toHaveLength(1)
  return found[0]
}

/** The outbox id of the event of `type` about `tenantId`. */
async function eventIdOf(ws: string, type: string, tenantId: string): Promise<string> {
  const rows = await server.core.db
    .select()
    .from(events)
    .where(and(eq(events.workspaceId, ws), eq(events.type, type), eq(events.tenantId, tenantId)))
  expect(rows).toHaveLength(1)
  return rows[0]!.id
}

const DELIVERY_KEYS = [
  'attempts',
  'event_id',
  'event_type',
  'id',
  'last_attempt_at',
  'last_error',
  'last_status_code',
  'next_attempt_at',
  'status',
]

describe('a delivery', () => {
  it("is a POST of SPEC's payload with Service-Signature, Service-Webhook-Id and Content-Type", async () => {
    const { owner, ws } = await workspaceWithOwner()
    const hook = await subscribe(owner, ws, ['tenant.created'])
    const at = clock.now()
    const tenant = await createTenant(owner, ws, 'acme')
    await deliver()

    const got = receiver.to(hook.url)
    expect(got).toHaveLength(1)
    const req = got[0]!
    expect(req.method).toBe('POST')
    expect(req.headers['content-type']).toStartWith('application/json')
    const eventId = await eventIdOf(ws, 'tenant.created', tenant.id)
    expect(eventId).toMatch(/^evt_[0-9A-Z]{26}$/)
    expect(req.webhookId).toBe(eventId)
    expect(req.body).toEqual({
      id: eventId,
      type: 'tenant.created',
      workspace_id: ws,
      tenant_id: tenant.id,
      created_at: isoTime(at),
      data: { tenant_id: tenant.id, slug: 'acme', name: 'ACME' },
    })
    // Signed once, at the server clock's time of the attempt.
    expect(req.signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
    expect(parseSignature(req.signature)!.t).toBe(Math.floor(at / 1000))

    const list = await deliveriesOf(owner, ws, hook.id)
    expect(list.total).toBe(1)
    // The contract's fields (the feature may add its own beside them).
    expect(Object.keys(list.items[0]).sort()).toEqual(expect.arrayContaining(DELIVERY_KEYS))
    expect(list.items[0]).toMatchObject({
      id: expect.stringMatching(/^dlv_[0-9A-Z]{26}$/),
      event_id: eventId,
      event_type: 'tenant.created',
      status: 'delivered',
      attempts: 1,
      last_status_code: 200,
      last_error: null,
      last_attempt_at: isoTime(at),
      next_attempt_at: null,
    })
    expect((await deliveriesOf(owner, ws, hook.id, 'delivered')).total).toBe(1)
    expect((await deliveriesOf(owner, ws, hook.id, 'retrying')).total).toBe(0)
  })

  it('verifies with the whole whsec_ secret; a tampered body, a 301 s old timestamp and a wrong secret fail', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const hook = await subscribe(owner, ws, ['tenant.created'])
    await createTenant(owner, ws, 'signed')
    await deliver()
    const [req] = receiver.to(hook.url)
    const { raw, signature } = req!
    const { t } = parseSignature(signature)!
    const verify = (secret: string, body = raw, header = signature, now = nowSeconds()) =>
      verifySignature(secret, header, body, now)

    expect(verify(hook.secret)).toBe(true)
    expect(signature).toBe(`t=${t},v1=${hmacHex(hook.secret, t, raw)}`)
    // A tampered body: a changed character, or the same JSON spaced otherwise.
    expect(verify(hook.secret, raw.replace('signed', 'signee'))).toBe(false)
    expect(verify(hook.secret, JSON.stringify(JSON.parse(raw), null, 2))).toBe(false)
    expect(verify(hook.secret, `${raw} `)).toBe(false)
    // The replay window: 300 s either way holds, 301 s does not; nor does a timestamp rewritten.
    expect(verify(hook.secret, raw, signature, t + 300)).toBe(true)
    expect(verify(hook.secret, raw, signature, t + 301)).toBe(false)
    expect(verify(hook.secret, raw, signature, t - 301)).toBe(false)
    expect(verify(hook.secret, raw, signature!.replace(`t=${t}`, `t=${t + 1}`), t)).toBe(false)
    // A wrong secret: another endpoint's, this one without its prefix, or altered.
    const other = await subscribe(owner, ws, ['tenant.created'])
    expect(verify(other.secret)).toBe(false)
    expect(verify(hook.secret.slice('whsec_'.length))).toBe(false)
    expect(verify(`${hook.secret.slice(0, -1)}${hook.secret.endsWith('A') ? 'B' : 'A'}`)).toBe(false)
  })

  it('goes only to the endpoints that list the type: not to another workspace nor to a disabled endpoint', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const created = await subscribe(owner, ws, ['tenant.created'])
    const deleted = await subscribe(owner, ws, ['tenant.deleted'])
    const both = await subscribe(owner, ws, ['tenant.created', 'tenant.deleted'])
    const users = await subscribe(owner, ws, ['user.created', 'plan.changed'])
    const disabled = await subscribe(owner, ws, ['tenant.created', 'tenant.deleted'])
    expect((await api(owner, 'PATCH', `${hooksOf(ws)}/${disabled.id}`, { enabled: false })).body.status).toBe(
      'disabled',
    )
    const elsewhere = await workspaceWithOwner()
    const foreign = await subscribe(elsewhere.owner, elsewhere.ws, ['tenant.created', 'tenant.deleted'])

    const tenant = await createTenant(owner, ws, 'routed')
    await deliver()
    const gone = await api(owner, 'DELETE', `/v1/workspaces/${ws}/tenants/${tenant.id}`)
    expect(gone.status).toBe(200)
    await deliver()

    const types = (hook: { url: string }) => receiver.to(hook.url).map((r) => r.body.type)
    expect(types(created)).toEqual(['tenant.created'])
    expect(types(deleted)).toEqual(['tenant.deleted'])
    expect(types(both)).toEqual(['tenant.created', 'tenant.deleted'])
    expect(types(users)).toEqual([])
    expect(types(disabled)).toEqual([])
    expect(types(foreign)).toEqual([])

    const [deletion] = receiver.to(deleted.url)
    expect(deletion!.body).toMatchObject({
      id: await eventIdOf(ws, 'tenant.deleted', tenant.id),
      type: 'tenant.deleted',
      workspace_id: ws,
      tenant_id: tenant.id,
    })
    // Each endpoint's deliveries are signed with its own secret only.
    for (const hook of [created, deleted, both])
      for (const r of receiver.to(hook.url)) {
        expect(verifySignature(hook.secret, r.signature, r.raw, nowSeconds())).toBe(true)
        for (const other of [created, deleted, both].filter((h) => h !== hook))
          expect(verifySignature(other.secret, r.signature, r.raw, nowSeconds())).toBe(false)
      }
    // The same event reached both endpoints that wanted it, under one id.
    expect(receiver.to(both.url)[0]!.webhookId).toBe(receiver.to(created.url)[0]!.webhookId)
    expect(
      (await deliveriesOf(owner, ws, disabled.id)).items.filter((d) => d.status === 'delivered'),
    ).toEqual([])
  })

  it('of POST …/test is a signed webhook.test event to that endpoint only; 202 {delivery_id, event_id}', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const tested = await subscribe(owner, ws, ['tenant.created'])
    const bystander = await subscribe(owner, ws, ['tenant.created', 'tenant.deleted'])
    const res = await api(owner, 'POST', `${hooksOf(ws)}/${tested.id}/test`)
    expect(res.status).toBe(202)
    expect(res.body).toEqual({
      delivery_id: expect.stringMatching(/^dlv_[0-9A-Z]{26}$/),
      event_id: expect.stringMatching(/^evt_[0-9A-Z]{26}$/),
    })
    await deliver()
    const got = receiver.to(tested.url)
    expect(got).toHaveLength(1)
    expect(got[0]!.webhookId).toBe(res.body.event_id)
    expect(got[0]!.body).toMatchObject({ id: res.body.event_id, type: 'webhook.test', workspace_id: ws })
    expect(verifySignature(tested.secret, got[0]!.signature, got[0]!.raw, nowSeconds())).toBe(true)
    expect(receiver.to(bystander.url)).toEqual([])
    const delivery = await deliveryOf(owner, ws, tested.id, res.body.event_id)
    expect(delivery).toMatchObject({
      id: res.body.delivery_id,
      event_type: 'webhook.test',
      status: 'delivered',
      attempts: 1,
      last_status_code: 200,
    })
    expect((await deliveriesOf(owner, ws, bystander.id)).total).toBe(0)
  })
})

describe('a failed delivery', () => {
  it('is a redirect too: a 3xx counts as a failure and its Location is never followed', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const hook = await subscribe(owner, ws, ['tenant.created'])
    const elsewhere = receiver.url()
    receiver.respond(hook.url, () => new Response(null, { status: 307, headers: { location: elsewhere } }))
    const tenant = await createTenant(owner, ws, 'redirected')
    await deliver()
    expect(receiver.to(hook.url)).toHaveLength(1)
    expect(receiver.to(elsewhere)).toEqual([])
    expect(
      await deliveryOf(owner, ws, hook.id, await eventIdOf(ws, 'tenant.created', tenant.id)),
    ).toMatchObject({
      status: 'retrying',
      attempts: 1,
      last_status_code: 307,
    })
  })

  it('of a deleted webhook is not retried: nothing more is sent to it', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const hook = await subscribe(owner, ws, ['tenant.created'])
    receiver.respond(hook.url, 500)
    await createTenant(owner, ws, 'orphaned')
    await deliver()
    expect(receiver.to(hook.url)).toHaveLength(1)
    expect((await api(owner, 'DELETE', `${hooksOf(ws)}/${hook.id}`)).body).toEqual({ deleted: true })
    for (const offset of RETRY_OFFSETS) {
      clock.advance(offset)
      await deliver()
    }
    expect(receiver.to(hook.url)).toHaveLength(1)
  })
})

describe('a rotated secret', () => {
  it('signs beside the new one for 24 hours (t=…,v1=<new>,v1=<old>), then no more', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const hook = await subscribe(owner, ws, ['tenant.created'])
    const rotatedAt = clock.now()
    const rotated = await api(owner, 'POST', `${hooksOf(ws)}/${hook.id}/rotate-secret`)
    expect(rotated.status).toBe(200)
    const fresh: string = rotated.body.secret
    secrets.push(fresh)
    expect(fresh).toMatch(/^whsec_/)
    expect(fresh).not.toBe(hook.secret)

    const latest = async (slug: string): Promise<Received> => {
      await createTenant(owner, ws, slug)
      await deliver()
      const got = receiver.to(hook.url)
      expect(got.at(-1)!.body.data.slug).toBe(slug)
      return got.at(-1)!
    }

    for (const [slug, at] of [
      ['at-once', rotatedAt],
      ['a-day-less-a-minute', rotatedAt + DAY - MINUTE],
    ] as const) {
      clock.set(at)
      const req = await latest(slug)
      expect(req.signature).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/)
      const { t, v1 } = parseSignature(req.signature)!
      expect(t).toBe(Math.floor(at / 1000))
      expect(v1).toEqual([hmacHex(fresh, t, req.raw), hmacHex(hook.secret, t, req.raw)])
      expect(verifySignature(fresh, req.signature, req.raw, nowSeconds())).toBe(true)
      expect(verifySignature(hook.secret, req.signature, req.raw, nowSeconds())).toBe(true)
    }

    clock.set(rotatedAt + DAY + MINUTE)
    const after = await latest('a-day-and-a-minute')
    expect(after.signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
    expect(verifySignature(fresh, after.signature, after.raw, nowSeconds())).toBe(true)
    expect(verifySignature(hook.secret, after.signature, after.raw, nowSeconds())).toBe(false)
  })
})

describe('retries', () => {
  it('follow 1 m, 5 m, 30 m, 2 h, 6 h, 12 h, 24 h, 48 h from the first failure, then failed_permanent; redeliver sends again', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const hook = await subscribe(owner, ws, ['tenant.created'])
    // The receiver refuses this one event and takes every other: the endpoint keeps succeeding now
    // and then (at 23 h and 47 h below), so it is never "down for 24 h" and paused meanwhile.
    let healed = false
    receiver.respond(hook.url, (r) => (r.body?.data?.slug === 'poison' && !healed ? 500 : 200))

    const first = clock.now()
    const tenant = await createTenant(owner, ws, 'poison')
    await deliver()
    const eventId = await eventIdOf(ws, 'tenant.created', tenant.id)
    const poisoned = () => receiver.to(hook.url).filter((r) => r.webhookId === eventId)
    expect(poisoned()).toHaveLength(1)
    const body = poisoned()[0]!.body
    expect(body.id).toBe(eventId)

    let delivery = await deliveryOf(owner, ws, hook.id, eventId)
    expect(delivery).toMatchObject({
      event_type: 'tenant.created',
      status: 'retrying',
      attempts: 1,
      last_status_code: 500,
      last_attempt_at: isoTime(first),
      next_attempt_at: isoTime(first + MINUTE),
    })
    expect((await deliveriesOf(owner, ws, hook.id, 'retrying')).items.map((d) => d.id)).toEqual([delivery.id])

    const keepAlive = async (slug: string, at: number) => {
      clock.set(at)
      await createTenant(owner, ws, slug)
      await deliver()
      expect(receiver.to(hook.url).at(-1)!.body.data.slug).toBe(slug)
    }

    for (const [i, offset] of RETRY_OFFSETS.entries()) {
      if (offset === DAY) await keepAlive('alive-23h', first + 23 * HOUR)
      if (offset === 2 * DAY) await keepAlive('alive-47h', first + 47 * HOUR)
      // A second before it is due: nothing.
      clock.set(first + offset - SECOND)
      await deliver()
      expect({ offset, posts: poisoned().length }).toEqual({ offset, posts: i + 1 })
      // When due: one more POST of the same event, signed anew.
      clock.set(first + offset)
      await deliver()
      const posts = poisoned()
      expect({ offset, posts: posts.length }).toEqual({ offset, posts: i + 2 })
      const again = posts.at(-1)!
      expect(again.webhookId).toBe(eventId)
      expect(again.body).toEqual(body)
      expect(parseSignature(again.signature)!.t).toBe(nowSeconds())
      expect(verifySignature(hook.secret, again.signature, again.raw, nowSeconds())).toBe(true)
      delivery = await deliveryOf(owner, ws, hook.id, eventId)
      const next = RETRY_OFFSETS[i + 1]
      expect({ offset, delivery }).toMatchObject({
        offset,
        delivery: {
          status: next ? 'retrying' : 'failed_permanent',
          attempts: i + 2,
          last_status_code: 500,
          last_attempt_at: isoTime(first + offset),
          next_attempt_at: next ? isoTime(first + next) : null,
        },
      })
    }

    const failed = await deliveriesOf(owner, ws, hook.id, 'failed_permanent')
    expect(failed).toMatchObject({ items: [delivery], total: 1 })
    expect((await deliveriesOf(owner, ws, hook.id, 'retrying')).total).toBe(0)
    // No attempt after the last.
    clock.advance(12 * HOUR)
    await deliver()
    expect(poisoned()).toHaveLength(9)

    // Redelivered by hand, to a receiver that takes it now.
    healed = true
    const redelivered = await api(
      owner,
      'POST',
      `${hooksOf(ws)}/${hook.id}/deliveries/${delivery.id}/redeliver`,
    )
    expect(redelivered.status).toBe(202)
    expect(redelivered.body).toMatchObject({ id: delivery.id, event_id: eventId, status: 'queued' })
    await deliver()
    expect(poisoned()).toHaveLength(10)
    expect(poisoned().at(-1)!.body).toEqual(body)
    expect(await deliveryOf(owner, ws, hook.id, eventId)).toMatchObject({
      status: 'delivered',
      last_status_code: 200,
    })
  })
})

describe('an endpoint down for 24 hours', () => {
  it('is paused: new events queue and nothing is sent until it is reactivated; then they are sent', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const hook = await subscribe(owner, ws, ['tenant.created'])
    const path = `${hooksOf(ws)}/${hook.id}`
    receiver.respond(hook.url, 500)

    const first = clock.now()
    await createTenant(owner, ws, 'down')
    await deliver()
    for (const offset of RETRY_OFFSETS.slice(0, 6)) {
      clock.set(first + offset)
      await deliver()
    }
    expect(receiver.to(hook.url)).toHaveLength(7)

    clock.set(first + DAY - SECOND)
    await deliver()
    expect((await api(owner, 'GET', path)).body.status).toBe('active')
    clock.set(first + DAY)
    await deliver()
    const paused = await api(owner, 'GET', path)
    expect(paused.body.status).toBe('paused')
    const sent = receiver.to(hook.url).length

    // An event while paused: a queued delivery, and nothing on the wire.
    const tenant = await createTenant(owner, ws, 'while-paused')
    const eventId = await eventIdOf(ws, 'tenant.created', tenant.id)
    await deliver()
    expect(await deliveryOf(owner, ws, hook.id, eventId)).toMatchObject({
      event_type: 'tenant.created',
      status: 'queued',
      attempts: 0,
    })
    expect((await deliveriesOf(owner, ws, hook.id, 'queued')).items.map((d) => d.event_id)).toContain(eventId)
    clock.advance(HOUR)
    await deliver()
    expect(receiver.to(hook.url)).toHaveLength(sent)
    expect((await api(owner, 'GET', path)).body.status).toBe('paused')

    // Reactivated, with the receiver back: the queued event goes out at the next tick.
    receiver.respond(hook.url, 200)
    const reactivated = await api(owner, 'POST', `${path}/reactivate`)
    expect(reactivated.status).toBe(200)
    expect(reactivated.body.status).toBe('active')
    await deliver()
    const queuedOnes = receiver.to(hook.url).filter((r) => r.webhookId === eventId)
    expect(queuedOnes).toHaveLength(1)
    expect(verifySignature(hook.secret, queuedOnes[0]!.signature, queuedOnes[0]!.raw, nowSeconds())).toBe(
      true,
    )
    expect(await deliveryOf(owner, ws, hook.id, eventId)).toMatchObject({
      status: 'delivered',
      attempts: 1,
      last_status_code: 200,
    })
    expect((await api(owner, 'GET', path)).body.status).toBe('active')
  })
})

describe('the rate cap', () => {
  it('sends 100 deliveries a minute per endpoint: of 150 events, 100 now and 50 a minute later, each once', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const hook = await subscribe(owner, ws, ['tenant.created'])
    const other = await subscribe(owner, ws, ['tenant.created'])
    for (const from of [0, 75]) {
      const batch = await api(
        owner,
        'POST',
        `/v1/workspaces/${ws}/tenants:batch`,
        Array.from({ length: 75 }, (_, i) => ({ slug: `t-${from + i}`, name: `Tenant ${from + i}` })),
      )
      expect(batch.status).toBe(200)
      expect(batch.body).toMatchObject({ created: 75, failed: 0 })
    }
    // A few seconds of the minute: each endpoint has 8 in flight at a time, the rest wait their turn.
    await deliverFor(5 * SECOND)
    expect(receiver.to(hook.url)).toHaveLength(100)
    // Each endpoint has its own cap.
    expect(receiver.to(other.url)).toHaveLength(100)

    clock.advance(MINUTE - 5 * SECOND)
    await deliverFor(5 * SECOND)
    const got = receiver.to(hook.url)
    expect(got).toHaveLength(150)
    const emitted = await server.core.db
      .select()
      .from(events)
      .where(and(eq(events.workspaceId, ws), eq(events.type, 'tenant.created')))
    expect(emitted).toHaveLength(150)
    expect(new Set(got.map((r) => r.webhookId))).toEqual(new Set(emitted.map((e) => e.id)))
    expect(new Set(got.map((r) => r.body.id)).size).toBe(150)
    for (const r of got) expect(r.webhookId).toBe(r.body.id)

    clock.advance(MINUTE)
    await deliver()
    expect(receiver.to(hook.url)).toHaveLength(150)
    expect(receiver.to(other.url)).toHaveLength(150)
    expect((await deliveriesOf(owner, ws, hook.id, 'delivered')).total).toBe(150)
  })
})

describe('a redelivery while an attempt is in flight', () => {
  it("is not undone by that attempt's late failure: the redelivered one is delivered", async () => {
    const { owner, ws } = await workspaceWithOwner()
    const hook = await subscribe(owner, ws, ['tenant.created'])
    // Every request waits for the test; the first is answered 500, the second 200.
    const waiting: ((r: Response) => void)[] = []
    receiver.respond(hook.url, () => new Promise<Response>((resolve) => waiting.push(resolve)))
    const until = async (what: () => boolean) => {
      const deadline = Date.now() + 10_000
      while (!what() && Date.now() < deadline) await Bun.sleep(10)
      expect(what()).toBe(true)
    }
    await createTenant(owner, ws, 'inflight')
    const first = server.tick()
    await until(() => waiting.length === 1)
    const [delivery] = (await deliveriesOf(owner, ws, hook.id)).items
    const again = await api(owner, 'POST', `${hooksOf(ws)}/${hook.id}/deliveries/${delivery!.id}/redeliver`)
    expect(again.status).toBe(202)
    const second = server.tick()
    await until(() => waiting.length === 2)
    // The first attempt fails after the redelivery took over; then the redelivery succeeds.
    waiting[0]!(new Response('no', { status: 500 }))
    await Bun.sleep(50)
    waiting[1]!(new Response('ok'))
    await Promise.all([first, second])
    await deliver()
    expect(await deliveryOf(owner, ws, hook.id, delivery!.event_id)).toMatchObject({
      status: 'delivered',
      attempts: 2,
      last_status_code: 200,
      next_attempt_at: null,
    })
    expect(receiver.to(hook.url)).toHaveLength(2)
  })
})

describe('a slow endpoint', () => {
  it('holds at most WEBHOOK_ENDPOINT_CONCURRENCY (8) deliveries in flight and keeps no other endpoint waiting', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const slow = await subscribe(owner, ws, ['tenant.created'])
    const fast = await subscribe(owner, ws, ['tenant.deleted'])
    // The slow endpoint answers only when the test lets it.
    let release!: () => void
    const released = new Promise<void>((resolve) => {
      release = resolve
    })
    receiver.respond(slow.url, async () => {
      await released
      return new Response('ok')
    })
    const batch = await api(
      owner,
      'POST',
      `/v1/workspaces/${ws}/tenants:batch`,
      Array.from({ length: 20 }, (_, i) => ({ slug: `s-${i}`, name: `Slow ${i}` })),
    )
    expect(batch.status).toBe(200)
    const slowRun = server.tick()
    const until = async (what: () => boolean) => {
      const deadline = Date.now() + 10_000
      while (!what() && Date.now() < deadline) await Bun.sleep(20)
    }
    await until(() => receiver.to(slow.url).length >= 8)
    // While the slow endpoint holds eight, another endpoint's events go out at once.
    const ids = batch.body.results.slice(0, 5).map((r: { tenant: { id: string } }) => r.tenant.id)
    for (const id of ids)
      expect((await api(owner, 'DELETE', `/v1/workspaces/${ws}/tenants/${id}`)).status).toBe(200)
    const fastRun = server.tick()
    await until(() => receiver.to(fast.url).length >= 5)
    expect(receiver.to(fast.url)).toHaveLength(5)
    expect(receiver.to(slow.url)).toHaveLength(8)
    release()
    await Promise.all([slowRun, fastRun])
    // The other twelve waited (rescheduled, not dropped) and go out once the clock reaches them.
    clock.advance(SECOND)
    await deliver()
    clock.advance(SECOND)
    await deliver()
    const got = receiver.to(slow.url)
    expect(new Set(got.map((r) => r.webhookId)).size).toBe(20)
    expect(got).toHaveLength(20)
    expect((await deliveriesOf(owner, ws, slow.id, 'delivered')).total).toBe(20)
  })
})

describe('a failing endpoint', () => {
  it("warns the workspace's owners by mail when over 5% of 30 minutes failed, at most once a day", async () => {
    const { owner, ws } = await workspaceWithOwner()
    const [email] = await ownerEmails(server.core, ws)
    const hook = await subscribe(owner, ws, ['tenant.created'])
    receiver.respond(hook.url, 503)
    const mailsTo = () => smtp.messages.filter((m) => m.to && JSON.stringify(m.to).includes(email!))
    await createTenant(owner, ws, 'warn-a')
    await deliver()
    await deliver()
    const mail = await smtp.waitFor((m) => JSON.stringify(m.to).includes(email!))
    expect(mail.subject).toBe(`Webhook deliveries to ${new URL(hook.url).host} are failing`)
    expect(mail.text).toContain(`1 of the last 1 deliveries to ${hook.url} failed (100%)`)
    expect(mail.text).toContain(`/app/workspaces/${ws}/settings/webhooks`)
    expect(mail.text).not.toContain(hook.secret)
    // More failures the same day: no second mail.
    await createTenant(owner, ws, 'warn-b')
    clock.advance(MINUTE)
    await deliver()
    await deliver()
    expect(receiver.to(hook.url).length).toBeGreaterThanOrEqual(3)
    expect(mailsTo()).toHaveLength(1)
    // A day later, still failing: one more.
    clock.advance(DAY)
    await createTenant(owner, ws, 'warn-c')
    await deliver()
    await deliver()
    await smtp.waitFor((m) => JSON.stringify(m.to).includes(email!) && m !== mail)
    expect(mailsTo()).toHaveLength(2)
  })
})

describe("docs/webhooks.md's verification example", () => {
  it('accepts a real delivery with the secret the API gave, and refuses it tampered, stale or with another secret', async () => {
    const page = readFileSync(join(import.meta.dir, '..', 'docs', 'webhooks.md'), 'utf8')
    const example = /<!-- webhook-verify-example -->\n```ts\n([\s\S]+?)\n```/.exec(page)?.[1]
    expect(example).toContain('export function verifyWebhook')
    const dir = mkdtempSync(join(tmpdir(), 'readme-webhook-'))
    try {
      writeFileSync(join(dir, 'verify.ts'), example!)
      const { verifyWebhook } = (await import(join(dir, 'verify.ts'))) as {
        verifyWebhook(raw: string, header: string, secret: string, toleranceS?: number): boolean
      }
      // The example reads the system time: this delivery is signed now.
      clock.set(Date.now())
      const { owner, ws } = await workspaceWithOwner()
      const hook = await subscribe(owner, ws, ['tenant.created'])
      await createTenant(owner, ws, 'readme')
      await deliver()
      const [got] = receiver.to(hook.url)
      expect(got?.signature).toBeString()
      expect(verifyWebhook(got!.raw, got!.signature!, hook.secret)).toBe(true)
      expect(verifyWebhook(got!.raw.replace('readme', 'README'), got!.signature!, hook.secret)).toBe(false)
      expect(verifyWebhook(got!.raw, got!.signature!, `${hook.secret}x`)).toBe(false)
      expect(verifyWebhook(got!.raw, got!.signature!, hook.secret, -1)).toBe(false)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('secrets', () => {
  it('are stored sealed: no column of the webhooks table holds one in clear', async () => {
    const rows = await server.core.store.query('SELECT * FROM webhooks', [])
    expect(rows.length).toBeGreaterThan(10)
    const stored = JSON.stringify(rows)
    for (const secret of secrets) {
      expect(stored).not.toContain(secret)
      expect(stored).not.toContain(secret.slice('whsec_'.length))
    }
  })
})

describe('payloads', () => {
  it('never carry a webhook secret (of every delivery this file caused)', () => {
    expect(receiver.requests.length).toBeGreaterThan(300)
    expect(secrets.length).toBeGreaterThan(10)
    for (const r of receiver.requests) {
      expect(r.raw).not.toContain('whsec_')
      for (const secret of secrets) {
        expect(r.raw).not.toContain(secret)
        expect(r.raw).not.toContain(secret.slice('whsec_'.length))
      }
    }
  })
})
