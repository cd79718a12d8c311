import { and, eq, sql } from 'drizzle-orm'
import type { BillingSettings, PlanName } from '../../config'
import type { Core } from '../../core'
import type { Conn } from '../../db/store'
import { workspacePlan } from '../workspaces/service'
import { accountOf } from './account'
import { capIn, isLive, MAU_THRESHOLDS, mauLimit, monthEnd, monthOf } from './plans'
import { billingMonthlyUsers, billingUsage } from './schema'

/** The durable job that reports a workspace's month of MAU to Stripe (jobs.ts). */
export const REPORT_USAGE = 'billing.report_usage'
/** New monthly active users are reported at most this often per workspace. */
const REPORT_EVERY_MS = 3_600_000

// One statement per sign-in: a user already counted this month changes nothing and returns no row.
const COUNT_USER = `INSERT INTO billing_monthly_users (workspace_id, month, account_id) VALUES ($1, $2, $3)
  ON CONFLICT DO NOTHING RETURNING account_id`

type Usage = typeof billingUsage.$inferSelect

/** Where a workspace stands this month: its count, and the count at which sign-ups stop (or null). */
export interface MonthUsage {
  month: string
  mau: number
  includedMau: number
  limit: number | null
  blocked: boolean
}

async function usageRow(conn: Pick<Conn, 'db'>, workspaceId: string, month: string): Promise<Usage | null> {
  const [row] = await conn.db
    .select()
    .from(billingUsage)
    .where(and(eq(billingUsage.workspaceId, workspaceId), eq(billingUsage.month, month)))
    .limit(1)
  return row ?? null
}

/** The count at which `workspaceId`'s sign-ups stop in `month`, from its plan and its cap then. */
async function limitOf(
  conn: Pick<Conn, 'db'>,
  billing: BillingSettings,
  workspaceId: string,
  plan: PlanName,
  month: string,
) {
  const account = await accountOf(conn, workspaceId)
  return mauLimit(billing, plan, account ? capIn(account, month) : null)
}

/**
 * MAU metering (DESIGN "Billing"): a distinct end user signed in to the workspace's instance in the
 * calendar month (UTC). Counted on the sign-in path by one upsert; only a user new this month goes
 * on to the month's row, where the warnings at 80, 95 and 100% of the included MAU and
 * `signups_blocked` are each sent once (flags set under the workspace's lock, so exact across nodes).
 */
export function createUsageMeter(core: Core, billing: BillingSettings) {
  async function newUser(workspaceId: string, month: string) {
    const now = core.clock.now()
    const reportable = await core.store.tx(async (tx) => {
      await tx.serialize(`billing-usage:${workspaceId}`)
      const plan = (await workspacePlan(tx, workspaceId)) ?? 'free'
      const [row] = await tx.db
        .insert(billingUsage)
        .values({ workspaceId, month, mau: 1 })
        .onConflictDoUpdate({
          target: [billingUsage.workspaceId, billingUsage.month],
          set: { mau: sql`${billingUsage.mau} + 1` },
        })
        .returning()
      const usage = row!
      const included = billing.plans[plan].includedMau
      const flags: Partial<Usage> = {}
      for (const threshold of MAU_THRESHOLDS) {
        const flag = `warned${threshold}` as const
        if (usage[flag] || usage.mau * 100 < threshold * included) continue
        flags[flag] = true
        await core.emit(
          'mau.threshold_warning',
          workspaceId,
          { threshold, mau: usage.mau, included_mau: included, plan, month },
          { tx },
        )
      }
      const limit = await limitOf(tx, billing, workspaceId, plan, month)
      if (!usage.blockedNotified && limit !== null && usage.mau >= limit) {
        flags.blockedNotified = true
        await core.emit(
          'signups_blocked',
          workspaceId,
          {
            mau: usage.mau,
            limit_mau: limit,
            plan,
            month,
            reason: plan === 'free' ? 'free_plan_limit' : 'spending_cap',
          },
          { tx },
        )
      }
      if (Object.keys(flags).length)
        await tx.db
          .update(billingUsage)
          .set(flags)
          .where(and(eq(billingUsage.workspaceId, workspaceId), eq(billingUsage.month, month)))
      const account = await accountOf(tx, workspaceId)
      return billing.stripe?.mauMeterEvent && account?.customerId && isLive(account.status)
    })
    if (!reportable) return
    // One report per workspace per hour slot, whichever node counted the users (a unique key).
    const slot = now - (now % REPORT_EVERY_MS) + REPORT_EVERY_MS
    await core.jobs.enqueueOnce(
      REPORT_USAGE,
      { workspace_id: workspaceId, month },
      `${REPORT_USAGE}:${workspaceId}:${slot}`,
      { runAt: Math.min(slot, monthEnd(month)), workspaceId },
    )
  }

  /** The month's usage of a workspace on `plan`, and whether new sign-ups are refused now. */
  async function monthUsage(workspaceId: string, plan: PlanName): Promise<MonthUsage> {
    const month = monthOf(core.clock.now())
    const mau = (await usageRow(core, workspaceId, month))?.mau ?? 0
    const limit = await limitOf(core, billing, workspaceId, plan, month)
    const includedMau = billing.plans[plan].includedMau
    return { month, mau, includedMau, limit, blocked: limit !== null && mau >= limit }
  }

  return {
    monthUsage,

    /** The identity plane calls this as each sign-in into a workspace instance finishes. */
    async activeUser(workspaceId: string, accountId: string): Promise<void> {
      const month = monthOf(core.clock.now())
      const added = await core.store.query(COUNT_USER, [workspaceId, month, accountId])
      if (added.length) await newUser(workspaceId, month)
    },

    /** Whether the workspace refuses new users now (the sign-up page and just-in-time IdP sign-up). */
    async signupsBlocked(workspaceId: string): Promise<boolean> {
      const plan = await workspacePlan(core, workspaceId)
      return plan !== null && (await monthUsage(workspaceId, plan)).blocked
    },
  }
}

/** The count of a workspace's month as it stands (the report job's). */
export async function monthCount(conn: Pick<Conn, 'db'>, workspaceId: string, month: string) {
  return (await usageRow(conn, workspaceId, month))?.mau ?? 0
}

/** Billing's share of a workspace's teardown: its months and their users. */
export async function deleteWorkspaceUsage(conn: Pick<Conn, 'db'>, workspaceId: string) {
  await conn.db.delete(billingMonthlyUsers).where(eq(billingMonthlyUsers.workspaceId, workspaceId))
  await conn.db.delete(billingUsage).where(eq(billingUsage.workspaceId, workspaceId))
}
