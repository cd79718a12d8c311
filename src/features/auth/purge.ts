import type { Core } from '../../core'
import { deleteInBatches } from '../../db/batch-delete'
import { LOGIN_REQUEST_TTL_MS } from './sessions'

/** Removes expired dashboard sessions and login requests nobody finished. */
export async function purgeExpiredAuthRows(core: Core): Promise<Record<string, number>> {
  const now = core.clock.now()
  return {
    sessions: await deleteInBatches(core.store, 'sessions', 'expires_at <= $1', [now]),
    login_requests: await deleteInBatches(core.store, 'login_requests', 'created_at <= $1', [
      now - LOGIN_REQUEST_TTL_MS,
    ]),
  }
}
