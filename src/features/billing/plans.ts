import type { BillingSettings, PlanName, StripeSettings } from '../../config'
import type { SubscriptionStatus } from './model'

/** Plans by what they include: a move down this order is a downgrade. */
export const PLAN_RANK: Record<PlanName, number> = { free: 0, pro: 1, enterprise: 2 }

/** Statuses under which the subscription's price decides the plan; any other is Free. */
const LIVE: ReadonlySet<string> = new Set<SubscriptionStatus>(['active', 'trialing', 'past_due'])
export const isLive = (status: string | null | undefined) => status != null && LIVE.has(status)

/** The plan a price id sells, or null for a price that is none of the plans' (a metered one). */
export function planOfPrice(stripe: StripeSettings, priceId: string): PlanName | null {
  const { prices } = stripe
  if (priceId === prices.pro) return 'pro'
  if (priceId === prices.free) return 'free'
  if (prices.enterprise !== null && priceId === prices.enterprise) return 'enterprise'
  return null
}

/** `YYYY-MM` of a time, UTC: the month monthly active users are counted in. */
export const monthOf = (ms: number) => new Date(ms).toISOString().slice(0, 7)

/** The month after `month`. */
export function nextMonth(month: string): string {
  const [y, m] = month.split('-').map(Number) as [number, number]
  return monthOf(Date.UTC(y, m, 1))
}

/** The first instant of the month after `month` (ms). */
export function monthEnd(month: string): number {
  const [y, m] = month.split('-').map(Number) as [number, number]
  return Date.UTC(y, m, 1)
}

/** The spending cap in force in `month`: one set during a month applies from the next on. */
export function capIn(
  account: { spendingCapCents: number | null; capFromMonth: string | null; previousCapCents: number | null },
  month: string,
): number | null {
  if (account.capFromMonth === null || month >= account.capFromMonth) return account.spendingCapCents
  return account.previousCapCents
}

/**
 * How many monthly active users a workspace may reach before new sign-ups stop (DESIGN "Billing"):
 * Free at its included MAU; a paid plan where one more user's overage would pass the spending cap;
 * null when nothing stops them (no cap, or overage that costs nothing).
 */
export function mauLimit(billing: BillingSettings, plan: PlanName, capCents: number | null): number | null {
  const terms = billing.plans[plan]
  if (plan === 'free') return terms.includedMau
  if (capCents === null || terms.overageCents === 0) return null
  return terms.includedMau + Math.floor(capCents / terms.overageCents)
}

/** The warnings of SPEC "Events" (`mau.threshold_warning`), in percent of the included MAU. */
export const MAU_THRESHOLDS = [80, 95, 100] as const
