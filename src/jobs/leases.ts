import { and, eq, sql } from 'drizzle-orm'
import { ulid } from 'ulid'
import type { Db } from '../db/store'
import { jobs } from '../queue/schema'
import type { Clock } from '../shared/clock'

/**
 * `locked_by` of a claim: `<node id>:<boot id>:<worker>` (DESIGN "Scale-out"). The node id is stable
 * (config `nodeId`), the boot id new on every start, so a node can tell its own dead leases apart.
 */
export const leaseOwner = (nodeId: string, bootId: string, worker: string): string =>
  `${nodeId}:${bootId}:${worker}`

/** A fresh boot id; time-sortable, so the later of two boots reads as the larger one. */
export const newBootId = (): string => ulid()

/**
 * Requeues the jobs an earlier boot of this node left `running`: that process is gone (killed
 * mid-job), so waiting out its leases only delays them. Another node's leases are never touched:
 * on a shared store that node may be alive. Returns how many jobs were requeued.
 */
export async function requeueEarlierBootJobs(
  db: Db,
  clock: Clock,
  nodeId: string,
  bootId: string,
): Promise<number> {
  const node = `${nodeId}:`
  const boot = leaseOwner(nodeId, bootId, '')
  // substr, not LIKE: a node id may contain `_`, a LIKE wildcard.
  const requeued = await db
    .update(jobs)
    .set({
      status: 'queued',
      leaseUntil: null,
      lockedBy: null,
      lastError: 'interrupted: its process stopped while it ran',
      updatedAt: clock.now(),
    })
    .where(
      and(
        eq(jobs.status, 'running'),
        sql`substr(${jobs.lockedBy}, 1, ${node.length}) = ${node}`,
        sql`substr(${jobs.lockedBy}, 1, ${boot.length}) <> ${boot}`,
      ),
    )
    .returning({ id: jobs.id })
  return requeued.length
}
