import { eq } from 'drizzle-orm'
import type { Conn } from '../../db/store'
import { billingAccounts } from './schema'

export type BillingAccount = typeof billingAccounts.$inferSelect
export type AccountChanges = Partial<Omit<BillingAccount, 'workspaceId' | 'createdAt' | 'updatedAt'>>

/** A workspace's billing mirror, or null before anything was billed. */
export async function accountOf(conn: Pick<Conn, 'db'>, workspaceId: string): Promise<BillingAccount | null> {
  const [row] = await conn.db
    .select()
    .from(billingAccounts)
    .where(eq(billingAccounts.workspaceId, workspaceId))
    .limit(1)
  return row ?? null
}

/** Writes `changes` to the workspace's mirror, creating it when it has none; the row after. */
export async function saveAccount(
  tx: Conn,
  workspaceId: string,
  changes: AccountChanges,
  now: number,
): Promise<BillingAccount> {
  const [row] = await tx.db
    .insert(billingAccounts)
    .values({ workspaceId, ...changes, createdAt: now, updatedAt: now })
    .onConflictDoUpdate({ target: billingAccounts.workspaceId, set: { ...changes, updatedAt: now } })
    .returning()
  return row!
}

/** The workspace whose customer this is, from its mirror. */
export async function workspaceOfCustomer(
  conn: Pick<Conn, 'db'>,
  customerId: string,
): Promise<string | null> {
  const [row] = await conn.db
    .select({ workspaceId: billingAccounts.workspaceId })
    .from(billingAccounts)
    .where(eq(billingAccounts.customerId, customerId))
    .limit(1)
  return row?.workspaceId ?? null
}

/** The billing teardown of a deleted workspace: its mirror. */
export async function deleteBillingAccount(conn: Pick<Conn, 'db'>, workspaceId: string): Promise<void> {
  await conn.db.delete(billingAccounts).where(eq(billingAccounts.workspaceId, workspaceId))
}
