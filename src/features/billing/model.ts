import { t } from 'elysia'

const plan = t.Union([t.Literal('free'), t.Literal('pro'), t.Literal('enterprise')], {
  description: '`free`, `pro` or `enterprise`',
})

/** Stripe's SubscriptionStatus values (DESIGN "Billing"). */
export const SUBSCRIPTION_STATUSES = [
  'active',
  'trialing',
  'past_due',
  'canceled',
  'unpaid',
  'incomplete',
  'incomplete_expired',
  'paused',
] as const
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number]

/** DESIGN "Billing": the billing state, checkout, portal, scheduled downgrades and the cap. */
export namespace BillingModel {
  export const planField = plan

  export const scheduledChange = t.Object({
    plan,
    effective_at: t.String({ description: 'When the switch happens: the current period end (ISO 8601 UTC)' }),
  })

  /** SPEC "Billing state" (`BillingStateView`). */
  export const state = t.Object({
    plan,
    status: t.Nullable(t.UnionEnum(SUBSCRIPTION_STATUSES, { description: "Stripe's SubscriptionStatus" })),
    cancel_at_period_end: t.Boolean(),
    current_period_end: t.Nullable(t.String()),
    spending_cap_cents: t.Nullable(
      t.Integer({ description: 'The overage cap as set; it applies from the next billing period on' }),
    ),
    signups_blocked: t.Boolean(),
    scheduled_change: t.Nullable(scheduledChange),
  })
  export type State = typeof state.static

  export const checkout = t.Object({ plan }, { additionalProperties: false })
  export const checkoutOut = t.Object({ url: t.String({ description: "Stripe's hosted checkout page" }) })
  export const portalOut = t.Object({ url: t.String({ description: "Stripe's customer portal" }) })
  export const schedule = t.Object({ plan }, { additionalProperties: false })

  export const spendingCap = t.Object(
    {
      spending_cap_cents: t.Nullable(
        t.Integer({ minimum: 0, maximum: 1_000_000_000, description: 'Cents; null removes the cap' }),
      ),
    },
    { additionalProperties: false },
  )
  export type SpendingCap = typeof spendingCap.static

  export const received = t.Object({
    received: t.Literal(true),
    duplicate: t.Boolean({ description: 'The event id was applied before: nothing changed' }),
  })
}
