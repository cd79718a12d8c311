import { and, eq } from 'drizzle-orm'
import type { Core } from '../../core'
import type { JobHandler } from '../../jobs/runner'
import { accountOf } from './account'
import { createPaymentEvents, END_GRACE } from './events'
import { isLive, monthEnd } from './plans'
import { billingUsage } from './schema'
import { callStripe, stripeClient } from './stripe'
import { monthCount, REPORT_USAGE } from './usage'

/**
 * Reports a workspace's month of monthly active users to Stripe as one Billing Meter event (the
 * meter aggregates with `last`: the count itself, not a delta, so a retried or repeated report
 * never counts a user twice). The identifier names the count, which Stripe deduplicates.
 */
const reportUsage: JobHandler<Core, { workspace_id: string; month: string }> = {
  kind: REPORT_USAGE,
  async run({ workspace_id: workspaceId, month }, core) {
    const stripe = core.config.billing.stripe
    const account = await accountOf(core, workspaceId)
    if (!stripe?.mauMeterEvent || !account?.customerId || !isLive(account.status)) return
    const mau = await monthCount(core, workspaceId, month)
    const event = stripe.mauMeterEvent
    const customer = account.customerId
    // Within the month it counts (a report due after the month's end is stamped at its last second).
    const at = Math.min(core.clock.now(), monthEnd(month) - 1000)
    await callStripe(core, 'billing.meterEvents.create', () =>
      stripeClient(stripe).billing.meterEvents.create({
        event_name: event,
        identifier: `mau:${workspaceId}:${month}:${mau}`,
        timestamp: Math.floor(at / 1000),
        payload: { stripe_customer_id: customer, value: String(mau) },
      }),
    )
    await core.db
      .update(billingUsage)
      .set({ reportedMau: mau })
      .where(and(eq(billingUsage.workspaceId, workspaceId), eq(billingUsage.month, month)))
  },
}

export const endGrace: JobHandler<Core, { workspace_id: string }> = {
  kind: END_GRACE,
  run: ({ workspace_id }, core) => createPaymentEvents(core).endGrace(workspace_id),
}

export const billingJobs = (): JobHandler<Core, never>[] =>
  [reportUsage, endGrace] as JobHandler<Core, never>[]
