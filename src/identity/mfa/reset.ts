import { and, eq } from 'drizzle-orm'
import type { Core } from '../../core'
import type { Conn } from '../../db/store'
import { signOutEverywhere } from '../accounts'
import { PLATFORM } from '../instances'
import { accountPasskeys, accountRecoveryCodes, accountTotp, webauthnChallenges } from '../schema'

/**
 * Removes every second factor of a workspace user (an admin's "reset MFA"): its authenticator app,
 * its recovery codes, its passkeys and any challenge still open for it. A reset is how a lost or
 * stolen factor is stopped, so it signs the user out everywhere in the same transaction
 * (`signOutEverywhere`, as a password change does): whoever holds a session or a token of theirs
 * signs in again. Under a policy of `required` the user enrols again at the next sign-in.
 * Idempotent. Platform accounts are not reset here: their dashboard sessions are the control
 * plane's to end. `recorded` runs in the same transaction (the caller's audit entry).
 */
export async function resetAccountMfa(
  core: Core,
  instanceId: string,
  accountId: string,
  recorded?: (tx: Conn) => Promise<unknown>,
): Promise<void> {
  if (instanceId === PLATFORM) throw new Error('platform accounts are not reset here')
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
    await signOutEverywhere(tx, instanceId, accountId)
    await recorded?.(tx)
  })
}
