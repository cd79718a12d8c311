import { eq, or, sql } from 'drizzle-orm'
import type { Core } from '../core'
import { ATTEMPT_BUCKETS, instanceKey } from '../limits/buckets'
import {
  accountLinks,
  accountPasskeys,
  accountRecoveryCodes,
  accounts,
  accountTokens,
  accountTotp,
  instanceKeys,
  instanceSecrets,
  loginThrottle,
  oidcPayloads,
  webauthnChallenges,
} from './schema'

/**
 * Deletes everything the plane holds of an instance: its keys and cookie secrets, its
 * oidc-provider rows, its accounts with their mailed tokens and second factors (authenticator apps,
 * recovery codes, passkeys, open WebAuthn challenges, links to external IdPs), and its throttle counters. Runs in its
 * own transaction; idempotent, so a workspace teardown that failed half-way runs it again.
 */
export async function deleteInstanceData(core: Core, instanceId: string): Promise<void> {
  const throttled = Object.values(ATTEMPT_BUCKETS).map((bucket) => {
    const prefix = `${bucket.prefix}:${instanceKey(instanceId, '')}`
    return sql`substr(${loginThrottle.key}, 1, ${sql.raw(String(prefix.length))}) = ${prefix}`
  })
  await core.store.tx(async (tx) => {
    await tx.db.delete(instanceKeys).where(eq(instanceKeys.instanceId, instanceId))
    await tx.db.delete(instanceSecrets).where(eq(instanceSecrets.instanceId, instanceId))
    await tx.db.delete(oidcPayloads).where(eq(oidcPayloads.instanceId, instanceId))
    await tx.db.delete(accountTokens).where(eq(accountTokens.instanceId, instanceId))
    await tx.db.delete(accountTotp).where(eq(accountTotp.instanceId, instanceId))
    await tx.db.delete(accountRecoveryCodes).where(eq(accountRecoveryCodes.instanceId, instanceId))
    await tx.db.delete(accountPasskeys).where(eq(accountPasskeys.instanceId, instanceId))
    await tx.db.delete(accountLinks).where(eq(accountLinks.instanceId, instanceId))
    await tx.db.delete(webauthnChallenges).where(eq(webauthnChallenges.instanceId, instanceId))
    await tx.db.delete(accounts).where(eq(accounts.instanceId, instanceId))
    await tx.db.delete(loginThrottle).where(or(...throttled))
  })
}
