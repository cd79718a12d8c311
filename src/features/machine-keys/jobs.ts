import { and, eq, isNull, sql } from 'drizzle-orm'
import type { Core } from '../../core'
import type { JobHandler } from '../../jobs/runner'
import { machineKeys } from './schema'

export const REVOKE_ROTATED_KEY = 'machine_key.revoke_rotated'

/**
 * A rotation's second half, 24 hours after it (SPEC "Machine key"): the old key is revoked. The
 * exchange refuses it from `revokes_at` on whether or not this ran; the job makes the row say so.
 * Idempotent: a key deleted meanwhile keeps its own revocation.
 */
export const revokeRotatedKey: JobHandler<Core, { keyId: string }> = {
  kind: REVOKE_ROTATED_KEY,
  async run({ keyId }, core) {
    await core.db
      .update(machineKeys)
      // Revoked as of the end of its grace, however late the job ran.
      .set({ revokedAt: sql`${machineKeys.revokesAt}`, revokedReason: 'rotated' })
      .where(and(eq(machineKeys.id, keyId), isNull(machineKeys.revokedAt)))
  },
}
