import type { Core } from '../core'
import type { JobHandler } from './runner'

export const PURGE_EXPIRED = 'maintenance.purge_expired'

/** One owner's share of the purge: deletes its rows nothing can use any more, counted per table. */
export type Purge = (core: Core) => Promise<Record<string, number>> | Record<string, number>

/**
 * Removes rows nothing can use any more, so tables stay bounded whatever is thrown at the
 * unauthenticated routes (e.g. a flood of /v1/auth/device/start). Each owner of a table purges
 * its own (the list is composed in registry.ts). Idempotent.
 */
export const purgeExpired = (purges: Purge[]): JobHandler<Core, null> => ({
  kind: PURGE_EXPIRED,
  async run(_payload, core) {
    const removed: Record<string, number> = {}
    for (const purge of purges) Object.assign(removed, await purge(core))
    core.log.info('expired rows purged', removed)
  },
})
