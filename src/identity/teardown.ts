import { eq, or, sql } from 'drizzle-orm'
import type { Core } from '../core'
import { accounts, accountTokens, instanceKeys, instanceSecrets, loginThrottle, oidcPayloads } from './schema'
import { THROTTLE_KINDS, throttleKey } from './throttle'

/**
 * Deletes everything the plane holds of an instance: its keys and cookie secrets, its
 * oidc-provider rows, its accounts with their mailed tokens, and its throttle counters. Runs in its
 * own transaction; idempotent, so a workspace teardown that failed half-way runs it again.
 */
export function deleteInstanceData(core: Core, instanceId: string): void {
  const throttled = THROTTLE_KINDS.map((kind) => {
    const prefix = throttleKey(kind, instanceId, '')
    return sql`substr(${loginThrottle.key}, 1, ${prefix.length}) = ${prefix}`
  })
  core.db.transaction((tx) => {
    tx.delete(instanceKeys).where(eq(instanceKeys.instanceId, instanceId)).run()
    tx.delete(instanceSecrets).where(eq(instanceSecrets.instanceId, instanceId)).run()
    tx.delete(oidcPayloads).where(eq(oidcPayloads.instanceId, instanceId)).run()
    tx.delete(accountTokens).where(eq(accountTokens.instanceId, instanceId)).run()
    tx.delete(accounts).where(eq(accounts.instanceId, instanceId)).run()
    tx.delete(loginThrottle)
      .where(or(...throttled))
      .run()
  })
}
