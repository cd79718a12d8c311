import type { Actor } from '../../access/model'
import type { PlanName, StripeSettings } from '../../config'
import type { Core } from '../../core'
import type { Conn } from '../../db/store'
import { isoTime } from '../../shared/clock'
import { appError } from '../../shared/errors'
import type { Workspace } from '../workspaces/service'
import { type AccountChanges, accountOf, type BillingAccount, saveAccount } from './account'
import { BillingErrors } from './errors'
import { type BillingModel, SUBSCRIPTION_STATUSES, type SubscriptionStatus } from './model'
import { capIn, isLive, monthOf, nextMonth, PLAN_RANK, planOfPrice } from './plans'
import { callStripe, idOf, type Stripe, stripeClient } from './stripe'
import { createUsageMeter } from './usage'

const statusOf = (s: string | null): SubscriptionStatus | null =>
  (SUBSCRIPTION_STATUSES as readonly string[]).includes(s ?? '') ? (s as SubscriptionStatus) : null

/** The subscription item that carries the plan's price (another may be a metered price). */
export function planItem(stripe: StripeSettings, sub: Stripe.Subscription) {
  return sub.items.data.find((i) => planOfPrice(stripe, i.price.id) !== null) ?? null
}

/** The phase a subscription schedule moves to next, as a plan change, when it changes the plan. */
function nextPhaseChange(stripe: StripeSettings, sub: Stripe.Subscription, plan: PlanName, nowMs: number) {
  const schedule = sub.schedule
  if (!schedule || typeof schedule === 'string') return null
  if (schedule.status !== 'active' && schedule.status !== 'not_started') return null
  const next = schedule.phases.find((p) => p.start_date * 1000 > nowMs)
  if (!next) return null
  for (const item of next.items) {
    const target = planOfPrice(stripe, idOf(item.price) ?? '')
    if (target && target !== plan) return { plan: target, effective_at: isoTime(next.start_date * 1000) }
  }
  return null
}

/**
 * Billing of a workspace (SPEC "Billing", DESIGN "Billing"). The state comes from the local mirror,
 * which Stripe's events keep (events.ts); the mutations call Stripe first, then record what it
 * answered with their audit entry in one transaction. Without Stripe configured every workspace is
 * Free and every mutation is a 409.
 */
export function createBillingService(core: Core) {
  const billing = core.config.billing
  const meter = createUsageMeter(core, billing)
  const pageUrl = (w: Workspace) => `${core.config.baseUrl}/app/workspaces/${w.id}/billing`

  function configured(): { settings: StripeSettings; client: Stripe } {
    if (!billing.stripe) throw appError(BillingErrors.NOT_CONFIGURED, 409)
    return { settings: billing.stripe, client: stripeClient(billing.stripe) }
  }

  const audit = (tx: Conn, w: Workspace, by: Actor, action: string, changes = {}) =>
    core.audit(
      { workspaceId: w.id, actor: by, action, target: { type: 'billing', id: w.id }, changes },
      { tx },
    )

  /** Records Stripe's answer in the mirror with its audit entry. */
  const record = (w: Workspace, by: Actor, action: string, changes: AccountChanges, audited = {}) =>
    core.store.tx(async (tx) => {
      const row = await saveAccount(tx, w.id, changes, core.clock.now())
      await audit(tx, w, by, action, audited)
      return row
    })

  /** The live subscription of the mirror, or a 409. */
  function liveSubscription(account: BillingAccount | null): string {
    if (!account?.subscriptionId || !isLive(account.status))
      throw appError(BillingErrors.NO_SUBSCRIPTION, 409)
    return account.subscriptionId
  }

  /** SPEC "Billing state": one Stripe call, only with a live subscription, for a scheduled change. */
  async function state(w: Workspace): Promise<BillingModel.State> {
    const account = await accountOf(core, w.id)
    const none = {
      status: null,
      cancel_at_period_end: false,
      current_period_end: null,
      scheduled_change: null,
    }
    if (!billing.stripe) return { plan: 'free', ...none, spending_cap_cents: null, signups_blocked: false }
    const usage = await meter.monthUsage(w.id, w.plan)
    let scheduled =
      account?.scheduledPlan && account.scheduledAt !== null
        ? { plan: account.scheduledPlan as PlanName, effective_at: isoTime(account.scheduledAt) }
        : null
    if (account?.subscriptionId && isLive(account.status)) {
      const settings = billing.stripe
      const id = account.subscriptionId
      try {
        const sub = await stripeClient(settings).subscriptions.retrieve(id, { expand: ['schedule'] })
        scheduled = nextPhaseChange(settings, sub, w.plan, core.clock.now())
      } catch (e) {
        // The mirror's own record of the schedule stands in while Stripe does not answer.
        core.log.warn('stripe call failed', {
          call: 'subscriptions.retrieve',
          type: (e as { type?: string }).type,
        })
      }
    }
    return {
      plan: w.plan,
      status: statusOf(account?.status ?? null),
      cancel_at_period_end: account?.cancelAtPeriodEnd ?? false,
      current_period_end: account?.currentPeriodEnd ? isoTime(account.currentPeriodEnd) : null,
      spending_cap_cents: account?.spendingCapCents ?? null,
      signups_blocked: usage.blocked,
      scheduled_change: scheduled,
    }
  }

  return {
    state,
    meter,

    /**
     * A hosted Checkout Session for `plan` (SPEC "Billing" rule 1: Enterprise is 422). A workspace
     * whose subscription lives on a lower plan moves up on it at once instead, Stripe invoicing the
     * prorated remainder now (rule 2), and is sent back to its billing page.
     */
    async checkout(w: Workspace, by: Actor, plan: PlanName): Promise<{ url: string }> {
      const { settings, client } = configured()
      if (w.state === 'deleting') throw appError(BillingErrors.WORKSPACE_DELETING, 409)
      const loc = ['body', 'plan']
      if (plan === 'enterprise') throw appError(BillingErrors.CONTACT_SALES, 422, { loc })
      if (plan === 'free') throw appError(BillingErrors.FREE_NEEDS_NO_CHECKOUT, 422, { loc })
      const account = await accountOf(core, w.id)
      const price = settings.prices[plan]
      if (account?.subscriptionId && isLive(account.status)) {
        if (PLAN_RANK[plan] <= PLAN_RANK[w.plan]) throw appError(BillingErrors.ALREADY_ON_PLAN, 409)
        const id = account.subscriptionId
        const sub = await callStripe(core, 'subscriptions.retrieve', () => client.subscriptions.retrieve(id))
        const item = planItem(settings, sub)
        if (!item) throw appError(BillingErrors.NO_SUBSCRIPTION, 409)
        await callStripe(core, 'subscriptions.update', () =>
          client.subscriptions.update(id, {
            items: [{ id: item.id, price }],
            proration_behavior: 'always_invoice',
          }),
        )
        await record(w, by, 'billing.upgraded', {}, { plan: { from: w.plan, to: plan } })
        return { url: pageUrl(w) }
      }
      const session = await callStripe(core, 'checkout.sessions.create', () =>
        client.checkout.sessions.create({
          mode: 'subscription',
          line_items: [{ price, quantity: 1 }],
          ...(account?.customerId ? { customer: account.customerId } : {}),
          client_reference_id: w.id,
          metadata: { workspace_id: w.id },
          subscription_data: { metadata: { workspace_id: w.id } },
          success_url: `${pageUrl(w)}?checkout=done`,
          cancel_url: `${pageUrl(w)}?checkout=cancelled`,
        }),
      )
      if (!session.url) throw appError(BillingErrors.PROVIDER_FAILED, 502)
      await record(w, by, 'billing.checkout_started', {}, { plan: { to: plan }, session: { to: session.id } })
      return { url: session.url }
    },

    /** Stripe's customer portal for the workspace's customer (payment methods, invoices). */
    async portal(w: Workspace, by: Actor): Promise<{ url: string }> {
      const { client } = configured()
      const customer = (await accountOf(core, w.id))?.customerId
      if (!customer) throw appError(BillingErrors.NO_CUSTOMER, 409)
      const session = await callStripe(core, 'billingPortal.sessions.create', () =>
        client.billingPortal.sessions.create({ customer, return_url: pageUrl(w) }),
      )
      await record(w, by, 'billing.portal_opened', {})
      return { url: session.url }
    },

    /**
     * SPEC "Billing" rule 2: a downgrade, kept until `current_period_end`, through a subscription
     * schedule whose next phase holds the lower price (no prorations); an upgrade is 422.
     */
    async schedule(w: Workspace, by: Actor, plan: PlanName): Promise<BillingModel.State> {
      const { settings, client } = configured()
      const id = liveSubscription(await accountOf(core, w.id))
      const loc = ['body', 'plan']
      if (plan === w.plan) throw appError(BillingErrors.SAME_PLAN, 422, { loc })
      if (PLAN_RANK[plan] > PLAN_RANK[w.plan])
        throw appError(BillingErrors.UPGRADE_NOT_SCHEDULED, 422, { loc })
      const price = settings.prices[plan]
      if (price === null) throw appError(BillingErrors.CONTACT_SALES, 422, { loc })
      const sub = await callStripe(core, 'subscriptions.retrieve', () => client.subscriptions.retrieve(id))
      const item = planItem(settings, sub)
      if (!item) throw appError(BillingErrors.NO_SUBSCRIPTION, 409)
      const periodEnd = item.current_period_end
      const existing = idOf(sub.schedule)
      const schedule = await callStripe(core, 'subscriptionSchedules', () =>
        existing
          ? client.subscriptionSchedules.retrieve(existing)
          : client.subscriptionSchedules.create({ from_subscription: id }),
      )
      const now = sub.items.data.map((i) => ({
        price: i.price.id,
        ...(i.quantity ? { quantity: i.quantity } : {}),
      }))
      const then = now.map((i) => (i.price === item.price.id ? { ...i, price } : i))
      const start = schedule.current_phase?.start_date ?? schedule.phases[0]?.start_date ?? 'now'
      await callStripe(core, 'subscriptionSchedules.update', () =>
        client.subscriptionSchedules.update(schedule.id, {
          end_behavior: 'release',
          phases: [
            { items: now, start_date: start, end_date: periodEnd, proration_behavior: 'none' },
            { items: then, duration: { interval: 'month', interval_count: 1 }, proration_behavior: 'none' },
          ],
        }),
      )
      await record(
        w,
        by,
        'billing.plan_change_scheduled',
        { scheduleId: schedule.id, scheduledPlan: plan, scheduledAt: periodEnd * 1000 },
        { plan: { from: w.plan, to: plan }, effective_at: { to: isoTime(periodEnd * 1000) } },
      )
      return state(w)
    },

    /** SPEC "Billing" rule 3: the pending change is dropped; the subscription renews as it is. */
    async release(w: Workspace, by: Actor): Promise<BillingModel.State> {
      const { client } = configured()
      const account = await accountOf(core, w.id)
      const id = liveSubscription(account)
      const sub = await callStripe(core, 'subscriptions.retrieve', () => client.subscriptions.retrieve(id))
      const scheduleId = idOf(sub.schedule) ?? account?.scheduleId ?? null
      if (scheduleId === null && !account?.scheduledPlan) return state(w)
      if (scheduleId !== null)
        await callStripe(core, 'subscriptionSchedules.release', () =>
          client.subscriptionSchedules.release(scheduleId, { preserve_cancel_date: true }),
        )
      await record(
        w,
        by,
        'billing.plan_change_released',
        { scheduleId: null, scheduledPlan: null, scheduledAt: null },
        { plan: { from: account?.scheduledPlan ?? null, to: null } },
      )
      return state(w)
    },

    /** SPEC "Billing" rule 4: the cap as set applies from the next billing period (month) on. */
    async setSpendingCap(
      w: Workspace,
      by: Actor,
      input: BillingModel.SpendingCap,
    ): Promise<BillingModel.State> {
      configured()
      const month = monthOf(core.clock.now())
      const cap = input.spending_cap_cents
      await core.store.tx(async (tx) => {
        await tx.serialize(`billing-usage:${w.id}`)
        const before = await accountOf(tx, w.id)
        // What is in force this month stays in force until it ends.
        const current = before ? capIn(before, month) : null
        await saveAccount(
          tx,
          w.id,
          { spendingCapCents: cap, capFromMonth: nextMonth(month), previousCapCents: current },
          core.clock.now(),
        )
        await audit(tx, w, by, 'billing.spending_cap_changed', {
          spending_cap_cents: { from: before?.spendingCapCents ?? null, to: cap },
          effective_from: { to: nextMonth(month) },
        })
      })
      return state(w)
    },
  }
}
