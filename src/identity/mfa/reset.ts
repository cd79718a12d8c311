import { and, eq } from 'drizzle-orm'
import type { Core } from '../../core'
import { accountPasskeys, accountRecoveryCodes, accountTotp, webauthnChallenges } from '../schema'

/**
 * Removes every second factor of an account (an admin's "reset MFA"): its authenticator app, its
 * recovery codes, its passkeys and any challenge still open for it. Under a policy of `required`
 * the user enrols again at the next sign-in. Idempotent.
 */
export async function resetAccountMfa(core: Core, instanceId: string, accountId: string): Promise<void> {
  await core.store.tx(async (tx) => {
    await tx.db
      .delete(accountTotp)
      .where(and(eq(accountTotp.instanceId, instanceId), eq(accountTotp.accountId, accountId)))
    await tx.db
      .delete(accountRecoveryCodes)
      .where(
        and(eq(accountRecoveryCodes.instanceId, instanceId), eq(accountRecoveryCodes.accountId, accountId)),
      )
    await tx.db
      .delete(accountPasskeys)
      .where(and(eq(accountPasskeys.instanceId, instanceId), eq(accountPasskeys.accountId, accountId)))
    await tx.db
      .delete(webauthnChallenges)
      .where(and(eq(webauthnChallenges.instanceId, instanceId), eq(webauthnChallenges.accountId, accountId)))
  })
}
