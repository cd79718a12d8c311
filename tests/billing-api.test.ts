import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { auditLog } from '../src/audit/schema'
import { events } from '../src/events/schema'
import { createSession, sessionCookieName } from '../src/features/auth/sessions'
import { signUp } from '../src/identity'
import { ManualClock } from '../src/shared/clock'
import { testApp } from './support/app'
import { type Caller, callApi, type Person, person } from './support/callers'
import { activeWorkspace, registerApp } from './support/instances'
import { startTestServer, type TestServer } from './support/server'
import { openSignInForm } from './support/sign-in'
import { PRICES, type StripeStandIn, startStripeStandIn } from './support/stripe-stand-in'

// Issue 31 through the JSON API with the official SDK against the Stripe stand-in: the billing
// state, checkout (Enterprise 422, an upgrade on a live subscription prorated), the portal, a
// downgrade scheduled at the period end and its release, the spending cap, and MAU metering on the
// sign-in path with its warnings and the block (the clock turned, never slept). Billing without
// Stripe configured: an in-process app over its own store.
const clock = new ManualClock(Date.now())
let stripe: StripeStandIn
let server: TestServer

beforeAll(async () => {
  stripe = startStripeStandIn(() => clock.now())
  server = await startTestServer(
    {
      ...stripe.env,
      BILLING_FREE_INCLUDED_MAU: '5',
      BILLING_PRO_INCLUDED_MAU: '10',
      BILLING_PRO_OVERAGE_CENTS: '100',
    },
    undefined,
    { clock },
  )
  stripe.deliverTo = `${server.baseUrl}/v1/webhooks/payments`
})
afterAll(async () => {
  await server.stop()
  stripe.stop()
})

/** A call as `who`; a person through a session opened now (the clock jumps past a session's week). */
async function api(who: Caller, method: string, path: string, body?: unknown) {
  if ('bearer' in who) return callApi(server.baseUrl, who, method, path, body)
  const { cookie, csrfToken } = await createSession(server.core, who.id, null)
  const now = { id: who.id, cookie: `${sessionCookieName(server.core)}=${cookie}`, csrf: csrfToken }
  return callApi(server.baseUrl, now, method, path, body)
}
const billingOf = (ws: string) => `/v1/workspaces/${ws}/billing`

async function workspaceWithOwner(): Promise<{ owner: Person; ws: string }> {
  const owner = await person(server.core)
  return { owner, ws: await activeWorkspace(server.core, owner.id) }
}

const eventsOf = (ws: string, type: string) =>
  server.core.db
    .select()
    .from(events)
    .where(and(eq(events.workspaceId, ws), eq(events.type, type)))

/** The session id of a checkout URL the API answered. */
const sessionOf = (url: string) => url.split('/').at(-1)!

/** A workspace subscribed to Pro through checkout and the stand-in's signed events. */
async function proWorkspace() {
  const { owner, ws } = await workspaceWithOwner()
  const started = await api(owner, 'POST', `${billingOf(ws)}/checkout`, { plan: 'pro' })
  expect(started.status).toBe(200)
  const { subscription, deliveries } = await stripe.completeCheckout(sessionOf(started.body.url))
  expect(deliveries.map((d) => d.status)).toEqual([200, 200])
  return { owner, ws, subscription }
}

describe('without Stripe configured', () => {
  it('every workspace is Free and every billing mutation answers 409', async () => {
    const { core, app } = await testApp()
    const owner = await person(core)
    const ws = await activeWorkspace(core, owner.id)
    const call = (method: string, path: string, body?: unknown) =>
      app.handle(
        new Request(`${core.config.baseUrl}/v1/workspaces/${ws}/billing${path}`, {
          method,
          headers: {
            cookie: owner.cookie,
            'x-csrf-token': owner.csrf,
            origin: core.config.baseUrl,
            ...(body ? { 'content-type': 'application/json' } : {}),
          },
          body: body ? JSON.stringify(body) : undefined,
        }),
      )
    const state = await call('GET', '')
    expect(state.status).toBe(200)
    expect(await state.json()).toEqual({
      plan: 'free',
      status: null,
      cancel_at_period_end: false,
      current_period_end: null,
      spending_cap_cents: null,
      signups_blocked: false,
      scheduled_change: null,
    })
    for (const [method, path, body] of [
      ['POST', '/checkout', { plan: 'pro' }],
      ['POST', '/portal'],
      ['POST', '/schedule-plan-change', { plan: 'free' }],
      ['DELETE', '/schedule-plan-change'],
      ['PATCH', '/spending-cap', { spending_cap_cents: 100 }],
    ] as const) {
      const res = await call(method, path, body)
      const answer = await res.json()
      expect([method, path, res.status, answer]).toEqual([method, path, 409, expect.anything()])
      expect(answer.detail).toBe('Billing is not configured: every workspace is on the Free plan')
    }
    await core.store.close()
  })
})

describe('the full loop with the real SDK', () => {
  it('checkout → signed events → Pro and plan.changed; a scheduled downgrade switches to Free at the period end', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const before = await api(owner, 'GET', billingOf(ws))
    expect(before.body).toMatchObject({ plan: 'free', status: null, scheduled_change: null })

    const started = await api(owner, 'POST', `${billingOf(ws)}/checkout`, { plan: 'pro' })
    expect(started.status).toBe(200)
    expect(started.body.url).toMatch(/^https:\/\/checkout\.stripe\.test\/c\/pay\/cs_test_/)
    const session = stripe.sessions.get(sessionOf(started.body.url))!
    expect(session.client_reference_id).toBe(ws)
    expect(session.line_items_requested).toEqual([{ price: PRICES.pro, quantity: '1' }])

    const { subscription } = await stripe.completeCheckout(session.id)
    const pro = await api(owner, 'GET', billingOf(ws))
    expect(pro.body).toMatchObject({ plan: 'pro', status: 'active', cancel_at_period_end: false })
    const periodEnd = subscription.items.data[0].current_period_end * 1000
    expect(pro.body.current_period_end).toBe(new Date(periodEnd).toISOString())
    expect((await eventsOf(ws, 'plan.changed')).map((e) => e.data)).toEqual([
      { from: 'free', to: 'pro', subscription_id: subscription.id },
    ])
    expect((await api(owner, 'GET', `/v1/workspaces/${ws}`)).body.plan).toBe('pro')

    const scheduled = await api(owner, 'POST', `${billingOf(ws)}/schedule-plan-change`, { plan: 'free' })
    expect(scheduled.status).toBe(200)
    const change = { plan: 'free', effective_at: new Date(periodEnd).toISOString() }
    expect(scheduled.body).toMatchObject({ plan: 'pro', scheduled_change: change })
    // GET asks Stripe (one call) for the schedule's next phase.
    const calls = stripe.requests.length
    expect((await api(owner, 'GET', billingOf(ws))).body.scheduled_change).toEqual(change)
    expect(stripe.requests.slice(calls).map((r) => `${r.method} ${r.path}`)).toEqual([
      `GET /v1/subscriptions/${subscription.id}`,
    ])

    clock.set(periodEnd + 1000)
    expect((await stripe.endPeriod(subscription.id)).status).toBe(200)
    const after = await api(owner, 'GET', billingOf(ws))
    expect(after.body).toMatchObject({ plan: 'free', status: 'active', scheduled_change: null })
    expect((await eventsOf(ws, 'plan.changed')).map((e) => e.data.to)).toEqual(['pro', 'free'])
    const actions = await server.core.db
      .select({ action: auditLog.action, actor: auditLog.actor })
      .from(auditLog)
      .where(eq(auditLog.workspaceId, ws))
    expect(actions.map((a) => a.action).sort()).toEqual(
      [
        'billing.checkout_started',
        'billing.plan_changed',
        'billing.plan_changed',
        'billing.plan_change_scheduled',
      ].sort(),
    )
  })

  it('DELETE on schedule-plan-change before the period end: the subscription renews on Pro', async () => {
    const { owner, ws, subscription } = await proWorkspace()
    await api(owner, 'POST', `${billingOf(ws)}/schedule-plan-change`, { plan: 'free' })
    const released = await api(owner, 'DELETE', `${billingOf(ws)}/schedule-plan-change`)
    expect(released.status).toBe(200)
    expect(released.body).toMatchObject({ plan: 'pro', scheduled_change: null })
    expect(stripe.subscriptions.get(subscription.id)!.schedule).toBeNull()
    // Twice is fine: nothing is pending.
    expect((await api(owner, 'DELETE', `${billingOf(ws)}/schedule-plan-change`)).status).toBe(200)

    clock.set(subscription.items.data[0].current_period_end * 1000 + 1000)
    await stripe.endPeriod(subscription.id)
    expect((await api(owner, 'GET', billingOf(ws))).body).toMatchObject({
      plan: 'pro',
      scheduled_change: null,
    })
    expect((await eventsOf(ws, 'plan.changed')).map((e) => e.data.to)).toEqual(['pro'])
  })

  it('the portal answers the customer portal URL', async () => {
    const { owner, ws, subscription } = await proWorkspace()
    const portal = await api(owner, 'POST', `${billingOf(ws)}/portal`)
    expect(portal.status).toBe(200)
    expect(portal.body.url).toMatch(/^https:\/\/billing\.stripe\.test\/p\/session\/bps_/)
    expect(stripe.requests.at(-1)!.body).toMatchObject({
      customer: subscription.customer,
      return_url: `${server.baseUrl}/app/workspaces/${ws}/billing`,
    })
    // A workspace that never subscribed has no customer yet.
    const fresh = await workspaceWithOwner()
    expect((await api(fresh.owner, 'POST', `${billingOf(fresh.ws)}/portal`)).status).toBe(409)
  })
})

describe('what billing refuses', () => {
  it('Enterprise checkout and an upgrade through schedule-plan-change are 422 with a clear detail', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const enterprise = await api(owner, 'POST', `${billingOf(ws)}/checkout`, { plan: 'enterprise' })
    expect(enterprise.status).toBe(422)
    expect(enterprise.body.detail[0]).toMatchObject({ loc: ['body', 'plan'], type: 'contact_sales' })
    expect(enterprise.body.detail[0].msg).toContain('contact sales')

    const pro = await proWorkspace()
    const upgrade = await api(pro.owner, 'POST', `${billingOf(pro.ws)}/schedule-plan-change`, {
      plan: 'enterprise',
    })
    expect(upgrade.status).toBe(422)
    expect(upgrade.body.detail[0]).toMatchObject({ loc: ['body', 'plan'], type: 'upgrade_not_scheduled' })
    expect(upgrade.body.detail[0].msg).toContain('upgrade goes through checkout')
    expect((await api(pro.owner, 'GET', billingOf(pro.ws))).body.scheduled_change).toBeNull()

    // Without a live subscription there is nothing to schedule.
    expect((await api(owner, 'POST', `${billingOf(ws)}/schedule-plan-change`, { plan: 'free' })).status).toBe(
      409,
    )
    expect((await api(owner, 'POST', `${billingOf(ws)}/checkout`, { plan: 'gold' })).status).toBe(422)
  })

  it('an upgrade on a live subscription moves it up at once, charging the prorated remainder', async () => {
    const { owner, ws, subscription } = await proWorkspace()
    await api(owner, 'POST', `${billingOf(ws)}/schedule-plan-change`, { plan: 'free' })
    clock.set(subscription.items.data[0].current_period_end * 1000 + 1000)
    await stripe.endPeriod(subscription.id)
    expect((await api(owner, 'GET', billingOf(ws))).body).toMatchObject({ plan: 'free', status: 'active' })

    const up = await api(owner, 'POST', `${billingOf(ws)}/checkout`, { plan: 'pro' })
    expect(up.status).toBe(200)
    expect(up.body.url).toBe(`${server.baseUrl}/app/workspaces/${ws}/billing`)
    expect(stripe.subscriptions.get(subscription.id)!.last_proration_behavior).toBe('always_invoice')
    await stripe.settle()
    expect((await api(owner, 'GET', billingOf(ws))).body.plan).toBe('pro')
    expect((await api(owner, 'POST', `${billingOf(ws)}/checkout`, { plan: 'pro' })).status).toBe(409)
  })

  it('takes workspace:admin for every mutation', async () => {
    const { ws } = await workspaceWithOwner()
    const developer = await person(server.core, { ws, role: 'developer' })
    expect((await api(developer, 'GET', billingOf(ws))).status).toBe(200)
    const refused = await api(developer, 'POST', `${billingOf(ws)}/checkout`, { plan: 'pro' })
    expect(refused.status).toBe(403)
    expect(refused.body.detail).toContain('workspace:admin')
  })
})

describe('the spending cap', () => {
  it('is set and removed, audited, and applies from the next month on', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const set = await api(owner, 'PATCH', `${billingOf(ws)}/spending-cap`, { spending_cap_cents: 500 })
    expect(set.status).toBe(200)
    expect(set.body.spending_cap_cents).toBe(500)
    expect(
      (await api(owner, 'PATCH', `${billingOf(ws)}/spending-cap`, { spending_cap_cents: -1 })).status,
    ).toBe(422)
    const removed = await api(owner, 'PATCH', `${billingOf(ws)}/spending-cap`, { spending_cap_cents: null })
    expect(removed.body.spending_cap_cents).toBeNull()
    const entries = await server.core.db
      .select({ changes: auditLog.changes })
      .from(auditLog)
      .where(and(eq(auditLog.workspaceId, ws), eq(auditLog.action, 'billing.spending_cap_changed')))
    expect(entries.map((e) => (e.changes as Record<string, { to: unknown }>).spending_cap_cents!.to)).toEqual(
      [500, null],
    )
  })
})

describe('MAU metering', () => {
  /** `n` end users of `ws`, each signed in once through the hosted form (a whole sign-in each). */
  async function signIns(ws: string, users: { email: string; password: string }[]) {
    const redirectUri = 'https://rp.example.com/cb'
    const app = await registerApp(server.core, ws, { type: 'spa', redirectUris: [redirectUri] })
    for (const user of users) {
      const { post } = await openSignInForm(server, ws, app.clientId, redirectUri)
      const res = await post(user.email, user.password)
      expect([res.status, user.email]).toEqual([303, user.email])
    }
  }

  async function endUsers(ws: string, n: number) {
    const users = Array.from({ length: n }, (_, i) => ({
      email: `u${i}-${ws}@example.com`,
      password: 'a long password 1',
    }))
    for (const u of users) await signUp(server.core, ws, u)
    return users
  }

  it('crossing 80% of the included MAU emits exactly one warning; repeat sign-ins count once', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const users = await endUsers(ws, 4)
    await signIns(ws, users.slice(0, 3))
    expect(await eventsOf(ws, 'mau.threshold_warning')).toEqual([])
    await signIns(ws, [users[3]!, users[0]!, users[3]!])
    const warnings = await eventsOf(ws, 'mau.threshold_warning')
    expect(warnings.map((w) => w.data)).toEqual([
      {
        threshold: 80,
        mau: 4,
        included_mau: 5,
        plan: 'free',
        month: new Date(clock.now()).toISOString().slice(0, 7),
      },
    ])
    expect((await api(owner, 'GET', billingOf(ws))).body.signups_blocked).toBe(false)
  })

  it("Free's included MAU reached blocks sign-ups (signups_blocked once); existing users still sign in; the next month unblocks", async () => {
    const { owner, ws } = await workspaceWithOwner()
    const users = await endUsers(ws, 6)
    await signIns(ws, users.slice(0, 5))
    expect((await eventsOf(ws, 'mau.threshold_warning')).map((w) => w.data.threshold)).toEqual([80, 95, 100])
    expect((await eventsOf(ws, 'signups_blocked')).map((e) => e.data)).toEqual([
      expect.objectContaining({ mau: 5, limit_mau: 5, reason: 'free_plan_limit' }),
    ])
    expect((await api(owner, 'GET', billingOf(ws))).body.signups_blocked).toBe(true)
    // An existing user new this month still signs in; nothing is sent twice.
    await signIns(ws, [users[5]!])
    expect(await eventsOf(ws, 'signups_blocked')).toHaveLength(1)

    const now = new Date(clock.now())
    clock.set(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1, 0, 5))
    expect((await api(owner, 'GET', billingOf(ws))).body.signups_blocked).toBe(false)
  })

  it('a paid plan stops where one more user would pass the spending cap, from the month after it was set', async () => {
    const { owner, ws } = await proWorkspace()
    await api(owner, 'PATCH', `${billingOf(ws)}/spending-cap`, { spending_cap_cents: 200 })
    // This month the cap is not in force yet: 10 included + 2 × 100 cents of overage = 12 next month.
    const users = await endUsers(ws, 12)
    await signIns(ws, users)
    expect(await eventsOf(ws, 'signups_blocked')).toEqual([])
    const now = new Date(clock.now())
    clock.set(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1, 0, 5))
    await signIns(ws, users.slice(0, 11))
    expect((await api(owner, 'GET', billingOf(ws))).body.signups_blocked).toBe(false)
    await signIns(ws, users.slice(11))
    expect((await eventsOf(ws, 'signups_blocked')).map((e) => e.data)).toEqual([
      expect.objectContaining({ mau: 12, limit_mau: 12, reason: 'spending_cap' }),
    ])
    expect((await api(owner, 'GET', billingOf(ws))).body.signups_blocked).toBe(true)
    // Reported to Stripe by the durable job, as the count itself.
    clock.advance(3_600_000)
    await server.tick()
    const mine = stripe.meterEvents.filter((e) => e.identifier.startsWith(`mau:${ws}:`))
    expect(mine.at(-1)).toMatchObject({ event_name: 'gatehouse_mau', payload: { value: '12' } })
    // 12 sign-ups and 24 password sign-ins: 36 argon2id hashes, which a loaded 2-core host takes past 30 s.
  }, 60_000)
})
