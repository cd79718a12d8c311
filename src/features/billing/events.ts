import type { Actor } from '../../access/model'
import type { PlanName, StripeSettings } from '../../config'
import type { Core } from '../../core'
import { deleteInBatches } from '../../db/batch-delete'
import type { Conn } from '../../db/store'
import { isoTime } from '../../shared/clock'
import { appError } from '../../shared/errors'
import { setWorkspacePlan, workspacePlan } from '../workspaces/service'
import { type AccountChanges, accountOf, saveAccount, workspaceOfCustomer } from './account'
import { BillingErrors } from './errors'
import { isLive, planOfPrice } from './plans'
import { billingEvents } from './schema'
import { planItem } from './service'
import { idOf, type Stripe, stripeClient } from './stripe'

/** The job that ends a failed payment's grace period (jobs.ts). */
export const END_GRACE = 'billing.end_grace'
/** Stripe's signed timestamp may be this far from now (seconds), as its own libraries default to. */
const SIGNATURE_TOLERANCE_S = 300
/**
 * The signed timestamp of a `Stripe-Signature` header (`t=<unix seconds>,v1=<hmac>`), read as
 * Stripe's SDK reads it (the last `t`), so it is the one the verified HMAC covers.
 */
function signedAt(header: string): number {
  let t = Number.NaN
  for (const item of header.split(',')) {
    const [key, value] = item.split('=')
    if (key === 't') t = Number.parseInt(value ?? '', 10)
  }
  return t
}

/** Event ids are kept this long: Stripe retries a delivery for up to 3 days. */
const EVENT_IDS_KEPT_MS = 30 * 86_400_000

/** Who the audit log names for what Stripe's events changed. */
const STRIPE_ACTOR: Actor = { id: 'system:stripe', ip: null, userAgent: null }

const pad = (n: number | null | undefined) => String(Math.max(0, Math.floor(n ?? 0))).padStart(12, '0')

/**
 * Where a subscription event stands in the subscription's own history, as text that sorts: the
 * subscription's creation (a newer subscription outranks an older one's news), the start of the
 * period it describes, the event's creation, then whether it ended (an end outranks an update of
 * the same moment). Arrival order plays no part.
 */
function orderOf(sub: Stripe.Subscription, periodStart: number | null, eventCreated: number): string {
  const ended = sub.status === 'canceled' || sub.ended_at !== null ? 1 : 0
  return `${pad(sub.created)}:${pad(periodStart)}:${pad(eventCreated)}:${ended}`
}

/** The workspace a subscription belongs to: its metadata (set at checkout), else its customer's. */
async function workspaceOfSubscription(tx: Conn, sub: Stripe.Subscription): Promise<string | null> {
  const named = sub.metadata?.workspace_id
  if (named && (await workspacePlan(tx, named)) !== null) return named
  const customer = idOf(sub.customer)
  return customer ? workspaceOfCustomer(tx, customer) : null
}

/**
 * SPEC "Inbound payment-provider webhook": Stripe's events, verified on the raw body, applied once.
 * The event id is written first in the transaction of its effect: a redelivery, on any node and at
 * the same moment too, meets the primary key and changes nothing.
 */
export function createPaymentEvents(core: Core) {
  const billing = core.config.billing

  /** A plan that changed: the event and audit entry, in `tx`; the identity plane reads it after commit. */
  async function changePlan(tx: Conn, workspaceId: string, plan: PlanName, data: Record<string, unknown>) {
    const before = await setWorkspacePlan(tx, workspaceId, plan, core.clock.now())
    if (before === null || before === plan) return
    await core.emit('plan.changed', workspaceId, { from: before, to: plan, ...data }, { tx })
    await core.audit(
      {
        workspaceId,
        actor: STRIPE_ACTOR,
        action: 'billing.plan_changed',
        target: { type: 'billing', id: workspaceId },
        changes: { plan: { from: before, to: plan } },
      },
      { tx },
    )
    // The data-plane rate is a plan setting: every node's identity plane follows.
    tx.afterCommit(() => void core.instances.changed(workspaceId))
  }

  async function subscriptionChanged(tx: Conn, settings: StripeSettings, event: Stripe.Event) {
    const sub = event.data.object as Stripe.Subscription
    const workspaceId = await workspaceOfSubscription(tx, sub)
    if (!workspaceId) return
    await tx.serialize(`billing:${workspaceId}`)
    const account = await accountOf(tx, workspaceId)
    const item = planItem(settings, sub)
    const order = orderOf(sub, item?.current_period_start ?? null, event.created)
    if (account?.subscriptionOrder && order < account.subscriptionOrder) return
    const status = event.type === 'customer.subscription.deleted' ? 'canceled' : sub.status
    const current = (await workspacePlan(tx, workspaceId)) ?? 'free'
    const priced = item ? planOfPrice(settings, item.price.id) : null
    const plan: PlanName = isLive(status) ? (priced ?? current) : 'free'
    const scheduleId = idOf(sub.schedule)
    const changes: AccountChanges = {
      customerId: idOf(sub.customer),
      subscriptionId: sub.id,
      priceId: item?.price.id ?? null,
      status,
      cancelAtPeriodEnd: sub.cancel_at_period_end,
      currentPeriodEnd: item ? item.current_period_end * 1000 : null,
      subscriptionOrder: order,
      scheduleId,
      // The switch happened (or the schedule was released): nothing is pending any more.
      ...(scheduleId === null ? { scheduledPlan: null, scheduledAt: null } : {}),
      ...(status !== 'past_due' ? { graceUntil: null } : {}),
    }
    await saveAccount(tx, workspaceId, changes, core.clock.now())
    await changePlan(tx, workspaceId, plan, { subscription_id: sub.id })
  }

  async function checkoutCompleted(tx: Conn, session: Stripe.Checkout.Session) {
    const workspaceId = session.client_reference_id ?? session.metadata?.workspace_id ?? null
    const customer = idOf(session.customer)
    if (!workspaceId || !customer || (await workspacePlan(tx, workspaceId)) === null) return
    await tx.serialize(`billing:${workspaceId}`)
    const account = await accountOf(tx, workspaceId)
    // The plan comes with the subscription's own events; this names the customer (for the portal).
    await saveAccount(
      tx,
      workspaceId,
      {
        customerId: customer,
        ...(account?.subscriptionId ? {} : { subscriptionId: idOf(session.subscription) }),
      },
      core.clock.now(),
    )
  }

  async function invoiceEvent(tx: Conn, event: Stripe.Event) {
    const invoice = event.data.object as Stripe.Invoice
    const customer = idOf(invoice.customer)
    const workspaceId = customer ? await workspaceOfCustomer(tx, customer) : null
    if (!workspaceId) return
    await tx.serialize(`billing:${workspaceId}`)
    const account = await accountOf(tx, workspaceId)
    if (!account || (account.invoiceEventAt ?? 0) > event.created) return
    const now = core.clock.now()
    const subscriptionId = idOf(invoice.parent?.subscription_details?.subscription) ?? account.subscriptionId
    if (event.type === 'invoice.paid') {
      await saveAccount(
        tx,
        workspaceId,
        {
          invoiceEventAt: event.created,
          graceUntil: null,
          ...(account.status === 'past_due' ? { status: 'active' } : {}),
        },
        now,
      )
      return
    }
    // invoice.payment_failed: past due, the plan kept through a grace period; told once per episode.
    const inGrace = account.graceUntil !== null
    const graceUntil = account.graceUntil ?? now + billing.graceDays * 86_400_000
    await saveAccount(
      tx,
      workspaceId,
      {
        invoiceEventAt: event.created,
        graceUntil,
        ...(isLive(account.status) ? { status: 'past_due' } : {}),
      },
      now,
    )
    if (inGrace) return
    await core.emit(
      'subscription.past_due',
      workspaceId,
      {
        subscription_id: subscriptionId,
        invoice_id: invoice.id ?? null,
        grace_period_ends_at: isoTime(graceUntil),
      },
      { tx },
    )
    await core.jobs.enqueue(END_GRACE, { workspace_id: workspaceId }, { tx, runAt: graceUntil, workspaceId })
  }

  async function dispatch(tx: Conn, settings: StripeSettings, event: Stripe.Event) {
    switch (event.type) {
      case 'checkout.session.completed':
        return checkoutCompleted(tx, event.data.object)
      case 'customer.subscription.created':
      case 'customer.subscription.updated':
      case 'customer.subscription.deleted':
        return subscriptionChanged(tx, settings, event)
      case 'invoice.payment_failed':
      case 'invoice.paid':
        return invoiceEvent(tx, event)
    }
  }

  return {
    /**
     * Verifies `raw` against `signature` (400 when missing or wrong, dated more than 300 s from now
     * either way, or when billing is off), then applies it once.
     */
    async receive(raw: string, signature: string | null): Promise<{ received: true; duplicate: boolean }> {
      const settings = billing.stripe
      // Without billing there is no secret to verify against: no signature is good (SPEC: 400).
      if (!settings || !signature) throw appError(BillingErrors.BAD_SIGNATURE, 400)
      const now = core.clock.now()
      let event: Stripe.Event
      try {
        event = await stripeClient(settings).webhooks.constructEventAsync(
          raw,
          signature,
          settings.webhookSecret,
          SIGNATURE_TOLERANCE_S,
          undefined,
          now,
        )
      } catch {
        throw appError(BillingErrors.BAD_SIGNATURE, 400)
      }
      // The SDK refuses a timestamp too far behind, not one ahead: a replay window holds both ways.
      if (!(signedAt(signature) - Math.floor(now / 1000) <= SIGNATURE_TOLERANCE_S))
        throw appError(BillingErrors.BAD_SIGNATURE, 400)
      const duplicate = await core.store.tx(async (tx) => {
        const [first] = await tx.db
          .insert(billingEvents)
          .values({ id: event.id, type: event.type, receivedAt: core.clock.now() })
          .onConflictDoNothing()
          .returning({ id: billingEvents.id })
        if (!first) return true
        await dispatch(tx, settings, event)
        return false
      })
      return { received: true, duplicate }
    },

    /** A failed payment's grace is over and nothing was paid: the workspace is on Free. */
    async endGrace(workspaceId: string): Promise<void> {
      await core.store.tx(async (tx) => {
        await tx.serialize(`billing:${workspaceId}`)
        const account = await accountOf(tx, workspaceId)
        if (!account?.graceUntil || account.graceUntil > core.clock.now() || account.status !== 'past_due')
          return
        await changePlan(tx, workspaceId, 'free', {
          subscription_id: account.subscriptionId,
          reason: 'payment_failed',
        })
      })
    },
  }
}

/** The periodic purge's share: event ids older than any redelivery. */
export async function purgeBillingEvents(core: Core): Promise<Record<string, number>> {
  return {
    billing_events: await deleteInBatches(core.store, 'billing_events', 'received_at <= $1', [
      core.clock.now() - EVENT_IDS_KEPT_MS,
    ]),
  }
}
