import { and, count, eq, inArray, isNotNull } from 'drizzle-orm'
import type { Core } from '../../core'
import { accountPasskeys, accountTotp } from '../schema'

export interface MfaSummary {
  /** A confirmed authenticator app. */
  totp: boolean
  passkeys: number
}

/** The second factors of accounts of an instance (the users list's badges), in two queries. */
export async function accountMfaSummary(
  core: Core,
  instanceId: string,
  accountIds: string[],
): Promise<Map<string, MfaSummary>> {
  const summary = new Map<string, MfaSummary>(accountIds.map((id) => [id, { totp: false, passkeys: 0 }]))
  if (accountIds.length === 0) return summary
  const apps = await core.db
    .select({ accountId: accountTotp.accountId })
    .from(accountTotp)
    .where(
      and(
        eq(accountTotp.instanceId, instanceId),
        inArray(accountTotp.accountId, accountIds),
        isNotNull(accountTotp.confirmedAt),
      ),
    )
  for (const { accountId } of apps) {
    const entry = summary.get(accountId)
    if (entry) entry.totp = true
  }
  const keys = await core.db
    .select({ accountId: accountPasskeys.accountId, n: count() })
    .from(accountPasskeys)
    .where(and(eq(accountPasskeys.instanceId, instanceId), inArray(accountPasskeys.accountId, accountIds)))
    .groupBy(accountPasskeys.accountId)
  for (const { accountId, n } of keys) {
    const entry = summary.get(accountId)
    if (entry) entry.passkeys = Number(n)
  }
  return summary
}

/** One account's second factors: whether a sign-in must ask for one, and which it may offer. */
export async function accountFactors(core: Core, instanceId: string, accountId: string): Promise<MfaSummary> {
  return (
    (await accountMfaSummary(core, instanceId, [accountId])).get(accountId) ?? { totp: false, passkeys: 0 }
  )
}

export const hasSecondFactor = (f: MfaSummary) => f.totp || f.passkeys > 0
