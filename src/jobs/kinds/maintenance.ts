import type { Core } from '../../core'
import { purgeExpiredAuthRows } from '../../features/auth/purge'
import { purgeExpiredIdentityRows } from '../../identity'
import { purgeFinishedPeriodicJobs } from '../queue'
import type { JobHandler } from '../runner'

export const PURGE_EXPIRED = 'maintenance.purge_expired'

/**
 * Removes rows nothing can use any more, so tables stay bounded whatever is thrown at the
 * unauthenticated routes (e.g. a flood of /v1/auth/device/start). Idempotent.
 */
export const purgeExpired: JobHandler<Core, null> = {
  kind: PURGE_EXPIRED,
  async run(_payload, core) {
    const removed = {
      ...(await purgeExpiredIdentityRows(core)),
      ...(await purgeExpiredAuthRows(core)),
      jobs: await purgeFinishedPeriodicJobs(core.db, core.clock),
    }
    core.log.info('expired rows purged', removed)
  },
}
