import { boolean, epochMs, index, integer, primaryKey, table, text } from '../../db/columns'

/**
 * A workspace's mirror of its Stripe customer and subscription (DESIGN "Billing"), written by the
 * inbound webhook (`POST /v1/webhooks/payments`) and by the billing routes after Stripe answered.
 * The plan itself is the workspace's (`workspaces.plan`); this row says why it is what it is.
 */
export const billingAccounts = table(
  'billing_accounts',
  {
    workspaceId: text('workspace_id').primaryKey(),
    customerId: text('customer_id'),
    subscriptionId: text('subscription_id'),
    /** The plan's price on the subscription now (its other items, a metered price, are not kept). */
    priceId: text('price_id'),
    /** Stripe's SubscriptionStatus; null before any subscription. */
    status: text('status'),
    cancelAtPeriodEnd: boolean('cancel_at_period_end').notNull().default(false),
    currentPeriodEnd: epochMs('current_period_end'),
    /**
     * Where the last applied subscription event stands in the subscription's own history
     * (`<created>:<period start>:<event created>:<ended>`, zero-padded, compared as text): an event
     * below it arrived late and changes nothing.
     */
    subscriptionOrder: text('subscription_order'),
    /** The subscription schedule that switches plan at the period end, its target and when. */
    scheduleId: text('schedule_id'),
    scheduledPlan: text('scheduled_plan'),
    scheduledAt: epochMs('scheduled_at'),
    /** Set by a failed payment; the plan is kept until then (`BILLING_GRACE_DAYS`). */
    graceUntil: epochMs('grace_until'),
    /** Stripe `created` (seconds) of the last invoice event applied, so a late one changes nothing. */
    invoiceEventAt: integer('invoice_event_at'),
    /** The overage cap (cents) in force from `capFromMonth` on; `previousCapCents` before it. */
    spendingCapCents: integer('spending_cap_cents'),
    capFromMonth: text('cap_from_month'),
    previousCapCents: integer('previous_cap_cents'),
    createdAt: epochMs('created_at').notNull(),
    updatedAt: epochMs('updated_at').notNull(),
  },
  (t) => [index('billing_accounts_customer_idx').on(t.customerId)],
)

/**
 * Stripe event ids already applied: written in the transaction of the event's effect, so a
 * redelivery (on any node, at the same moment too) finds its id and changes nothing. Not a
 * workspace's data (an event may name none); purged after 30 days, past Stripe's 3 days of retries.
 */
export const billingEvents = table(
  'billing_events',
  {
    id: text('id').primaryKey(),
    type: text('type').notNull(),
    receivedAt: epochMs('received_at').notNull(),
  },
  (t) => [index('billing_events_received_idx').on(t.receivedAt)],
)

/** One row per end user who signed in to a workspace's instance in a calendar month (UTC). */
export const billingMonthlyUsers = table(
  'billing_monthly_users',
  {
    workspaceId: text('workspace_id').notNull(),
    /** `YYYY-MM`, UTC. */
    month: text('month').notNull(),
    accountId: text('account_id').notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.month, t.accountId] })],
)

/**
 * A workspace's month: its count of monthly active users (one more per new row above), which of
 * the warnings were sent, whether `signups_blocked` was, and the count last reported to Stripe.
 */
export const billingUsage = table(
  'billing_usage',
  {
    workspaceId: text('workspace_id').notNull(),
    month: text('month').notNull(),
    mau: integer('mau').notNull(),
    warned80: boolean('warned_80').notNull().default(false),
    warned95: boolean('warned_95').notNull().default(false),
    warned100: boolean('warned_100').notNull().default(false),
    blockedNotified: boolean('blocked_notified').notNull().default(false),
    reportedMau: integer('reported_mau').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.month] })],
)
