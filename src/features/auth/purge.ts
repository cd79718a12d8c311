import type { Core } from '../../core'
import { deleteInBatches } from '../../db/purge'
import { LOGIN_REQUEST_TTL_MS } from './sessions'

/** Removes expired dashboard sessions and login requests nobody finished. */
export async function purgeExpiredAuthRows(core: Core): Promise<Record<string, number>> {
  const now = core.clock.now()
  return {
    sessions: await deleteInBatches(core.db, 'sessions', 'expires_at <= $now', { now }),
    login_requests: await deleteInBatches(core.db, 'login_requests', 'created_at <= $before', {
      before: now - LOGIN_REQUEST_TTL_MS,
    }),
  }
}
