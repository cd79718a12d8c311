import { createHmac, randomBytes } from 'node:crypto'
import type { Json } from './users'

// A small Stripe-compatible server for tests and local development (issue 31, Deliver 5): only the
// endpoints billing calls, answered in Stripe's wire format (form-encoded requests with bracketed
// keys, JSON objects with `object`, errors as `{"error": {type, code, message}}`), so the official
// SDK talks to it unchanged through STRIPE_API_HOST. It posts events back signed as Stripe signs
// them (`Stripe-Signature: t=<unix>,v1=<HMAC-SHA256 of "<t>.<body>" keyed by the endpoint secret>`).
// What a customer does on Stripe's hosted pages (paying, a period ending) are helpers a test calls.

export const STRIPE_KEY = 'sk_test_gatehouse'
export const WEBHOOK_SECRET = 'whsec_test_gatehouse'
export const PRICES = { free: 'price_free', pro: 'price_pro', enterprise: 'price_enterprise' }
const API_VERSION = '2026-10-28.endive'
const PERIOD_S = 30 * 86_400

type Obj = Record<string, Json>

/** Stripe's form encoding back into objects: `items[0][price]=p` → `{items: [{price: 'p'}]}`. */
export function parseStripeForm(text: string): Obj {
  const out: Obj = {}
  for (const [key, value] of new URLSearchParams(text)) {
    const path = key.split(/[[\]]+/).filter(Boolean)
    let cur: Json = out
    path.forEach((seg, i) => {
      const last = i === path.length - 1
      const nextIsIndex = !last && /^\d+$/.test(path[i + 1]!)
      if (last) cur[seg] = value
      else cur = cur[seg] ??= nextIsIndex ? [] : {}
    })
  }
  return out
}

const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`

/** Stripe's signature header over `payload` at `t` (seconds). */
export function stripeSignature(payload: string, t: number, secret = WEBHOOK_SECRET): string {
  const v1 = createHmac('sha256', secret).update(`${t}.${payload}`).digest('hex')
  return `t=${t},v1=${v1}`
}

export interface Delivery {
  status: number
  body: Json
}

export interface StripeStandIn {
  url: string
  /** The STRIPE_* environment of a server that bills through this stand-in. */
  env: Record<string, string>
  /** Where events are posted (`{base}/v1/webhooks/payments`); set once the server is up. */
  deliverTo: string
  /** Every API request received, in order. */
  requests: { method: string; path: string; body: Obj }[]
  sessions: Map<string, Obj>
  subscriptions: Map<string, Obj>
  schedules: Map<string, Obj>
  meterEvents: Obj[]
  /** A Stripe event of `type` about `object` (a fresh id, `created` now unless given). */
  event(type: string, object: Obj, opts?: { id?: string; created?: number; previous?: Obj }): Obj
  /** Posts `event` signed (to `to`, or `deliverTo`); the receiver's answer. */
  post(event: Obj, opts?: { to?: string; signature?: string | null }): Promise<Delivery>
  /** The customer paid on the hosted checkout page: customer and subscription, then their events. */
  completeCheckout(sessionId: string): Promise<{ subscription: Obj; deliveries: Delivery[] }>
  /** The current period ends: a schedule's next phase takes over (then it is released), renewed. */
  endPeriod(subscriptionId: string): Promise<Delivery>
  /** Events posted by API calls (an upgrade's `customer.subscription.updated`) have all arrived. */
  settle(): Promise<void>
  stop(): void
}

export function startStripeStandIn(now: () => number): StripeStandIn {
  const seconds = () => Math.floor(now() / 1000)
  const sessions = new Map<string, Obj>()
  const subscriptions = new Map<string, Obj>()
  const schedules = new Map<string, Obj>()
  const meterEvents: Obj[] = []
  const requests: StripeStandIn['requests'] = []
  const inflight = new Set<Promise<unknown>>()

  const error = (status: number, message: string, code?: string) =>
    Response.json(
      { error: { type: 'invalid_request_error', message, ...(code ? { code } : {}) } },
      { status },
    )
  const missing = (what: string, id: string) => error(404, `No such ${what}: '${id}'`, 'resource_missing')

  const price = (id: string) => ({ id, object: 'price', active: true, currency: 'usd', type: 'recurring' })

  function item(subscriptionId: string, priceId: string, start: number): Obj {
    return {
      id: newId('si'),
      object: 'subscription_item',
      created: start,
      price: price(priceId),
      quantity: 1,
      subscription: subscriptionId,
      current_period_start: start,
      current_period_end: start + PERIOD_S,
      metadata: {},
    }
  }

  function newSubscription(customer: string, priceId: string, metadata: Obj): Obj {
    const id = newId('sub')
    const start = seconds()
    const sub: Obj = {
      id,
      object: 'subscription',
      created: start,
      start_date: start,
      billing_cycle_anchor: start,
      customer,
      status: 'active',
      cancel_at_period_end: false,
      canceled_at: null,
      ended_at: null,
      livemode: false,
      metadata,
      schedule: null,
      latest_invoice: null,
      items: {
        object: 'list',
        data: [item(id, priceId, start)],
        has_more: false,
        url: `/v1/subscription_items?subscription=${id}`,
      },
    }
    subscriptions.set(id, sub)
    return sub
  }

  /** The subscription as Stripe shows it, its schedule expanded when asked. */
  function shown(sub: Obj, expand: string[]): Obj {
    const copy = structuredClone(sub)
    if (expand.includes('schedule') && copy.schedule) copy.schedule = schedules.get(copy.schedule) ?? null
    return copy
  }

  function event(
    type: string,
    object: Obj,
    opts: { id?: string; created?: number; previous?: Obj } = {},
  ): Obj {
    return {
      id: opts.id ?? newId('evt'),
      object: 'event',
      api_version: API_VERSION,
      created: opts.created ?? seconds(),
      data: {
        object: structuredClone(object),
        ...(opts.previous ? { previous_attributes: opts.previous } : {}),
      },
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type,
    }
  }

  async function post(e: Obj, opts: { to?: string; signature?: string | null } = {}): Promise<Delivery> {
    const payload = JSON.stringify(e)
    const signature = opts.signature === undefined ? stripeSignature(payload, seconds()) : opts.signature
    const res = await fetch(opts.to ?? standIn.deliverTo, {
      method: 'POST',
      headers: {
        'content-type': 'application/json; charset=utf-8',
        'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
        ...(signature === null ? {} : { 'stripe-signature': signature }),
      },
      body: payload,
    })
    const text = await res.text()
    return { status: res.status, body: text ? JSON.parse(text) : null }
  }

  /** An event posted after the API call that caused it has answered, as Stripe does. */
  function later(e: Obj) {
    const sent: Promise<unknown> = new Promise((r) => setTimeout(r, 0))
      .then(() => post(e))
      .finally(() => inflight.delete(sent))
    inflight.add(sent)
  }

  function handle(method: string, path: string, body: Obj, query: URLSearchParams): Response | Obj {
    const expand = [...query.entries()].filter(([k]) => k.startsWith('expand')).map(([, v]) => v)
    const subscription = path.match(/^\/v1\/subscriptions\/([^/]+)$/)
    const scheduleMatch = path.match(/^\/v1\/subscription_schedules\/([^/]+)(\/release)?$/)
    if (method === 'POST' && path === '/v1/checkout/sessions') {
      const id = newId('cs_test')
      const session: Obj = {
        id,
        object: 'checkout.session',
        created: seconds(),
        mode: body.mode,
        status: 'open',
        payment_status: 'unpaid',
        customer: body.customer ?? null,
        client_reference_id: body.client_reference_id ?? null,
        metadata: body.metadata ?? {},
        subscription: null,
        success_url: body.success_url,
        cancel_url: body.cancel_url,
        url: `https://checkout.stripe.test/c/pay/${id}`,
        livemode: false,
        line_items_requested: body.line_items,
        subscription_data_requested: body.subscription_data ?? null,
      }
      sessions.set(id, session)
      return session
    }
    if (method === 'POST' && path === '/v1/billing_portal/sessions') {
      if (!body.customer) return error(400, 'Missing required param: customer.')
      const id = newId('bps')
      return {
        id,
        object: 'billing_portal.session',
        created: seconds(),
        customer: body.customer,
        return_url: body.return_url ?? null,
        url: `https://billing.stripe.test/p/session/${id}`,
        livemode: false,
      }
    }
    if (subscription) {
      const sub = subscriptions.get(subscription[1]!)
      if (!sub) return missing('subscription', subscription[1]!)
      if (method === 'GET') return shown(sub, expand)
      // An update: the plan item's new price, the prorated remainder invoiced at once.
      const previous = structuredClone(sub.items)
      for (const change of (body.items ?? []) as Obj[]) {
        const target = sub.items.data.find((i: Obj) => i.id === change.id)
        if (!target) return error(400, `Invalid subscription item: ${change.id}`)
        if (change.price) target.price = price(change.price)
      }
      sub.last_proration_behavior = body.proration_behavior ?? 'create_prorations'
      later(event('customer.subscription.updated', sub, { previous: { items: previous } }))
      return shown(sub, expand)
    }
    if (method === 'POST' && path === '/v1/subscription_schedules') {
      const sub = subscriptions.get(body.from_subscription)
      if (!sub) return missing('subscription', body.from_subscription)
      if (sub.schedule)
        return error(400, 'You cannot migrate a subscription that is already attached to a schedule.')
      const first = sub.items.data[0]
      const phase = {
        start_date: first.current_period_start,
        end_date: first.current_period_end,
        items: sub.items.data.map((i: Obj) => ({ price: i.price.id, quantity: i.quantity })),
        proration_behavior: 'create_prorations',
      }
      const schedule: Obj = {
        id: newId('sub_sched'),
        object: 'subscription_schedule',
        created: seconds(),
        customer: sub.customer,
        subscription: sub.id,
        status: 'active',
        end_behavior: 'release',
        current_phase: { start_date: phase.start_date, end_date: phase.end_date },
        phases: [phase],
        released_at: null,
        released_subscription: null,
        metadata: {},
        livemode: false,
      }
      schedules.set(schedule.id, schedule)
      sub.schedule = schedule.id
      return schedule
    }
    if (scheduleMatch) {
      const m = scheduleMatch
      const schedule = schedules.get(m[1]!)
      if (!schedule) return missing('subscription_schedule', m[1]!)
      if (method === 'GET') return schedule
      if (schedule.status !== 'active' && schedule.status !== 'not_started')
        return error(
          400,
          `You cannot update a subscription schedule that is currently in the \`${schedule.status}\` status.`,
        )
      if (m[2]) {
        schedule.status = 'released'
        schedule.released_at = seconds()
        schedule.released_subscription = schedule.subscription
        const sub = subscriptions.get(schedule.subscription)
        if (sub) sub.schedule = null
        return schedule
      }
      if (body.end_behavior) schedule.end_behavior = body.end_behavior
      if (body.phases) {
        let start = Number(body.phases[0].start_date)
        schedule.phases = (body.phases as Obj[]).map((p) => {
          const end = p.end_date
            ? Number(p.end_date)
            : start + PERIOD_S * Number(p.duration?.interval_count ?? 1)
          const phase = {
            start_date: start,
            end_date: end,
            items: (p.items as Obj[]).map((i) => ({
              price: i.price,
              quantity: i.quantity ? Number(i.quantity) : null,
            })),
            proration_behavior: p.proration_behavior ?? 'create_prorations',
          }
          start = end
          return phase
        })
        schedule.current_phase = {
          start_date: schedule.phases[0].start_date,
          end_date: schedule.phases[0].end_date,
        }
      }
      return schedule
    }
    if (method === 'POST' && path === '/v1/billing/meter_events') {
      const recorded = {
        object: 'billing.meter_event',
        created: seconds(),
        event_name: body.event_name,
        identifier: body.identifier ?? newId('mev'),
        livemode: false,
        payload: body.payload,
        timestamp: Number(body.timestamp ?? seconds()),
      }
      meterEvents.push(recorded)
      return recorded
    }
    return error(404, `Unrecognized request URL (${method}: ${path}).`)
  }

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const url = new URL(req.url)
      const body = parseStripeForm(req.method === 'GET' ? '' : await req.text())
      requests.push({ method: req.method, path: url.pathname, body })
      if (req.headers.get('authorization') !== `Bearer ${STRIPE_KEY}`)
        return Response.json(
          { error: { type: 'invalid_request_error', message: 'Invalid API Key provided.' } },
          { status: 401 },
        )
      const answer = handle(req.method, url.pathname, body, url.searchParams)
      return answer instanceof Response
        ? answer
        : Response.json(answer, { headers: { 'request-id': newId('req') } })
    },
  })

  const standIn: StripeStandIn = {
    url: `http://127.0.0.1:${server.port}`,
    env: {
      STRIPE_SECRET_KEY: STRIPE_KEY,
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      STRIPE_PRICE_FREE: PRICES.free,
      STRIPE_PRICE_PRO: PRICES.pro,
      STRIPE_PRICE_ENTERPRISE: PRICES.enterprise,
      STRIPE_API_HOST: `http://127.0.0.1:${server.port}`,
      STRIPE_MAU_METER_EVENT: 'gatehouse_mau',
    },
    deliverTo: '',
    requests,
    sessions,
    subscriptions,
    schedules,
    meterEvents,
    event,
    post,

    async completeCheckout(sessionId) {
      const session = sessions.get(sessionId)
      if (!session) throw new Error(`no checkout session ${sessionId}`)
      const customer = session.customer ?? newId('cus')
      const lines = session.line_items_requested as Obj[]
      const metadata = (session.subscription_data_requested?.metadata ?? {}) as Obj
      const sub = newSubscription(customer, lines[0]!.price, metadata)
      Object.assign(session, { status: 'complete', payment_status: 'paid', customer, subscription: sub.id })
      const deliveries = [
        await post(event('checkout.session.completed', session)),
        await post(event('customer.subscription.created', sub)),
      ]
      return { subscription: structuredClone(sub), deliveries }
    },

    async endPeriod(subscriptionId) {
      const sub = subscriptions.get(subscriptionId)
      if (!sub) throw new Error(`no subscription ${subscriptionId}`)
      const previous = structuredClone({ items: sub.items, schedule: sub.schedule })
      const end = sub.items.data[0].current_period_end as number
      const schedule = sub.schedule ? schedules.get(sub.schedule) : null
      const next = schedule?.phases.find((p: Obj) => p.start_date === end)
      if (next) {
        sub.items.data = (next.items as Obj[]).map((i) => item(sub.id, i.price, end))
        const last = schedule!.phases.at(-1) === next
        if (last && schedule!.end_behavior === 'release') {
          Object.assign(schedule!, { status: 'released', released_at: end, released_subscription: sub.id })
          sub.schedule = null
        } else schedule!.current_phase = { start_date: next.start_date, end_date: next.end_date }
      } else {
        for (const i of sub.items.data) {
          i.current_period_start = end
          i.current_period_end = end + PERIOD_S
        }
      }
      return post(event('customer.subscription.updated', sub, { previous }))
    },

    async settle() {
      while (inflight.size) await Promise.all([...inflight])
    },

    stop: () => server.stop(true),
  }
  return standIn
}
