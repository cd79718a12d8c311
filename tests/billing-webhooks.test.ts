import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { events } from '../src/events/schema'
import { billingAccounts } from '../src/features/billing/schema'
import { workspaces } from '../src/features/workspaces/schema'
import { ManualClock } from '../src/shared/clock'
import { activeWorkspace } from './support/instances'
import { startTestServer, type TestServer } from './support/server'
import { PRICES, type StripeStandIn, startStripeStandIn, stripeSignature } from './support/stripe-stand-in'

// SPEC "Inbound payment-provider webhook" with events the stand-in signs as Stripe does: the
// signature checked on the raw body (missing, wrong, stale, ahead or over other bytes, and any while
// billing is off: 400 and nothing changed), each event id applied once, out-of-order events resolved
// by the subscription's own timestamps, a failed payment's grace period, and no rate limit on the route.
const clock = new ManualClock(Date.now())
let stripe: StripeStandIn
let server: TestServer
const DAY = 86_400_000

beforeAll(async () => {
  stripe = startStripeStandIn(() => clock.now())
  server = await startTestServer({ ...stripe.env, BILLING_GRACE_DAYS: '3' }, undefined, { clock })
  stripe.deliverTo = `${server.baseUrl}/v1/webhooks/payments`
})
afterAll(async () => {
  await server.stop()
  stripe.stop()
})

const seconds = () => Math.floor(clock.now() / 1000)

/** A subscription object of workspace `ws` on `price`, as Stripe sends it in events. */
function subscription(
  ws: string,
  price: string,
  opts: { id?: string; periodStart?: number; status?: string } = {},
) {
  const id = opts.id ?? `sub_${crypto.randomUUID().slice(0, 8)}`
  const start = opts.periodStart ?? seconds()
  return {
    id,
    object: 'subscription',
    created: seconds() - 100,
    customer: `cus_${ws.slice(0, 8)}`,
    status: opts.status ?? 'active',
    cancel_at_period_end: false,
    canceled_at: null,
    ended_at: null,
    metadata: { workspace_id: ws },
    schedule: null,
    items: {
      object: 'list',
      data: [
        {
          id: `si_${id}`,
          object: 'subscription_item',
          price: { id: price, object: 'price' },
          quantity: 1,
          current_period_start: start,
          current_period_end: start + 30 * 86_400,
        },
      ],
      has_more: false,
    },
  }
}

const planOf = async (ws: string) =>
  (await server.core.db.select({ plan: workspaces.plan }).from(workspaces).where(eq(workspaces.id, ws)))[0]!
    .plan
const eventsOf = (ws: string, type: string) =>
  server.core.db
    .select()
    .from(events)
    .where(and(eq(events.workspaceId, ws), eq(events.type, type)))
const accountOf = async (ws: string) =>
  (await server.core.db.select().from(billingAccounts).where(eq(billingAccounts.workspaceId, ws)))[0]

describe('the signature', () => {
  it('missing, wrong, stale, ahead or over other bytes: 400 and nothing changed', async () => {
    const ws = await activeWorkspace(server.core)
    const e = stripe.event('customer.subscription.created', subscription(ws, PRICES.pro))
    const payload = JSON.stringify(e)
    const cases: [string, string | null, string][] = [
      ['missing', null, payload],
      ['wrong secret', stripeSignature(payload, seconds(), 'whsec_someone_else'), payload],
      ['garbage', 'nonsense', payload],
      ['stale (10 minutes old)', stripeSignature(payload, seconds() - 600), payload],
      // Stripe's SDK checks only the past: a timestamp ahead is refused here as far as one behind.
      ['ahead (10 minutes in the future)', stripeSignature(payload, seconds() + 600), payload],
      ['just past the window ahead (301 s)', stripeSignature(payload, seconds() + 301), payload],
      // The signed bytes re-serialised with other spacing: a parsed-and-restringified body fails.
      ['other bytes', stripeSignature(payload, seconds()), JSON.stringify(e, null, 2)],
    ]
    for (const [what, signature, body] of cases) {
      const res = await fetch(stripe.deliverTo, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(signature ? { 'stripe-signature': signature } : {}),
        },
        body,
      })
      expect([what, res.status]).toEqual([what, 400])
      expect((await res.json()).detail).toBe('Missing or invalid Stripe-Signature')
    }
    expect(await planOf(ws)).toBe('free')
    expect(await accountOf(ws)).toBeUndefined()
    // The same event, signed, is then applied: nothing recorded its id before.
    expect((await stripe.post(e)).body).toEqual({ received: true, duplicate: false })
    expect(await planOf(ws)).toBe('pro')
  })

  it("takes a timestamp up to 300 s off either way (the senders' clocks differ)", async () => {
    for (const skew of [-300, 300]) {
      const ws = await activeWorkspace(server.core)
      const payload = JSON.stringify(
        stripe.event('customer.subscription.created', subscription(ws, PRICES.pro)),
      )
      const res = await fetch(stripe.deliverTo, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'stripe-signature': stripeSignature(payload, seconds() + skew),
        },
        body: payload,
      })
      expect([skew, res.status]).toEqual([skew, 200])
      expect(await planOf(ws)).toBe('pro')
    }
  })

  it('without billing configured: 400 all the same, since no signature can be verified', async () => {
    const off = await startTestServer()
    try {
      const payload = JSON.stringify(stripe.event('invoice.paid', { id: 'in_off', object: 'invoice' }))
      for (const signature of [null, 'nonsense', stripeSignature(payload, seconds())]) {
        const res = await fetch(`${off.baseUrl}/v1/webhooks/payments`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(signature ? { 'stripe-signature': signature } : {}),
          },
          body: payload,
        })
        expect([signature, res.status]).toEqual([signature, 400])
        expect((await res.json()).detail).toBe('Missing or invalid Stripe-Signature')
      }
    } finally {
      await off.stop()
    }
  })

  it('is exempt from rate limits (no X-RateLimit headers)', async () => {
    const ws = await activeWorkspace(server.core)
    const res = await stripe.post(
      stripe.event('invoice.paid', { id: 'in_1', object: 'invoice', customer: `cus_${ws}` }),
    )
    expect(res.status).toBe(200)
    const raw = await fetch(stripe.deliverTo, { method: 'POST', body: '{}' })
    expect(raw.headers.get('x-ratelimit-limit')).toBeNull()
  })
})

describe('each event id once', () => {
  it('the same event delivered twice changes nothing the second time', async () => {
    const ws = await activeWorkspace(server.core)
    const e = stripe.event('customer.subscription.created', subscription(ws, PRICES.pro))
    expect((await stripe.post(e)).body).toEqual({ received: true, duplicate: false })
    expect(await planOf(ws)).toBe('pro')
    // Moved back by hand: a second application would set it to Pro again and emit again.
    await server.core.db.update(workspaces).set({ plan: 'free' }).where(eq(workspaces.id, ws))
    expect((await stripe.post(e)).body).toEqual({ received: true, duplicate: true })
    expect(await planOf(ws)).toBe('free')
    expect(await eventsOf(ws, 'plan.changed')).toHaveLength(1)
  })
})

describe('out-of-order events', () => {
  it('two updates of one subscription delivered in reverse order end in the later state', async () => {
    const ws = await activeWorkspace(server.core)
    const id = `sub_${crypto.randomUUID().slice(0, 8)}`
    const first = stripe.event('customer.subscription.updated', subscription(ws, PRICES.pro, { id }))
    const next = stripe.event(
      'customer.subscription.updated',
      subscription(ws, PRICES.free, { id, periodStart: seconds() + 30 * 86_400 }),
      { created: seconds() + 30 * 86_400 },
    )
    expect((await stripe.post(next)).status).toBe(200)
    expect(await planOf(ws)).toBe('free')
    expect((await stripe.post(first)).body).toEqual({ received: true, duplicate: false })
    expect(await planOf(ws)).toBe('free')
    expect((await accountOf(ws))!.priceId).toBe(PRICES.free)
    expect(await eventsOf(ws, 'plan.changed')).toEqual([])
  })

  it('a deletion that arrives before an update of the same second ends canceled on Free', async () => {
    const ws = await activeWorkspace(server.core)
    const id = `sub_${crypto.randomUUID().slice(0, 8)}`
    const created = seconds()
    const updated = stripe.event('customer.subscription.updated', subscription(ws, PRICES.pro, { id }), {
      created,
    })
    const deleted = stripe.event(
      'customer.subscription.deleted',
      { ...subscription(ws, PRICES.pro, { id, status: 'canceled' }), ended_at: created },
      { created },
    )
    await stripe.post(
      stripe.event('customer.subscription.created', subscription(ws, PRICES.pro, { id }), {
        created: created - 60,
      }),
    )
    expect(await planOf(ws)).toBe('pro')
    await stripe.post(deleted)
    await stripe.post(updated)
    expect(await planOf(ws)).toBe('free')
    expect((await accountOf(ws))!.status).toBe('canceled')
    expect((await eventsOf(ws, 'plan.changed')).map((e) => e.data.to)).toEqual(['pro', 'free'])
  })
})

describe('payments', () => {
  it('a failed payment: past_due, subscription.past_due once, the plan kept through the grace period, then Free', async () => {
    const ws = await activeWorkspace(server.core)
    const sub = subscription(ws, PRICES.pro)
    await stripe.post(stripe.event('customer.subscription.created', sub))
    const invoice = {
      id: 'in_failed',
      object: 'invoice',
      customer: sub.customer,
      parent: { type: 'subscription_details', subscription_details: { subscription: sub.id } },
    }
    await stripe.post(stripe.event('invoice.payment_failed', invoice))
    await stripe.post(stripe.event('invoice.payment_failed', invoice, { created: seconds() + 60 }))
    expect((await accountOf(ws))!.status).toBe('past_due')
    const pastDue = await eventsOf(ws, 'subscription.past_due')
    expect(pastDue.map((e) => e.data)).toEqual([
      {
        subscription_id: sub.id,
        invoice_id: 'in_failed',
        grace_period_ends_at: new Date(clock.now() + 3 * DAY).toISOString(),
      },
    ])
    clock.advance(3 * DAY - 60_000)
    await server.tick()
    expect(await planOf(ws)).toBe('pro')
    clock.advance(120_000)
    await server.tick()
    expect(await planOf(ws)).toBe('free')
    expect((await eventsOf(ws, 'plan.changed')).map((e) => e.data)).toEqual([
      expect.objectContaining({ to: 'pro' }),
      expect.objectContaining({ from: 'pro', to: 'free', reason: 'payment_failed' }),
    ])
  })

  it('a payment within the grace period keeps the plan', async () => {
    const ws = await activeWorkspace(server.core)
    const sub = subscription(ws, PRICES.pro)
    await stripe.post(stripe.event('customer.subscription.created', sub))
    const invoice = { id: 'in_late', object: 'invoice', customer: sub.customer, parent: null }
    await stripe.post(stripe.event('invoice.payment_failed', invoice))
    clock.advance(DAY)
    await stripe.post(stripe.event('invoice.paid', invoice))
    expect((await accountOf(ws))!).toMatchObject({ status: 'active', graceUntil: null })
    clock.advance(3 * DAY)
    await server.tick()
    expect(await planOf(ws)).toBe('pro')
  })
})
