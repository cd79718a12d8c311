import { Cron } from 'croner'
import type { Core } from '../core'
import { isoTime } from '../shared/clock'
import { PURGE_EXPIRED } from './purge-expired'

interface PeriodicJob {
  kind: string
  everyMs: number
}

/** Work that runs on a schedule rather than on demand. */
const PERIODIC_JOBS: PeriodicJob[] = [{ kind: PURGE_EXPIRED, everyMs: 5 * 60_000 }]

/**
 * Enqueues the current slot of every periodic job, due at the slot's start. The slot names the
 * job (`<kind>@<slot start>`, a unique key), so every node of a cluster may call this and the
 * slot still runs once; a slot missed while no node was up is not caught up. `seen` lets a
 * process skip slots it already enqueued. Returns how many jobs this call added.
 */
export async function enqueuePeriodic(
  core: Pick<Core, 'clock' | 'jobs'>,
  seen = new Map<string, number>(),
): Promise<number> {
  const now = core.clock.now()
  let added = 0
  for (const { kind, everyMs } of PERIODIC_JOBS) {
    const slot = now - (now % everyMs)
    if (seen.get(kind) === slot) continue
    if (await core.jobs.enqueueOnce(kind, null, `${kind}@${isoTime(slot)}`, { runAt: slot })) added++
    seen.set(kind, slot)
  }
  return added
}

export interface Schedule {
  /** Enqueues the slots due by the core's clock now, as the next 15-second check would. */
  tick(): Promise<void>
  stop(): void
}

/**
 * Checks for a new slot every 15 seconds in the main thread, reading the core's clock (a test's
 * ManualClock too); the job runtime runs what it enqueues.
 */
export function startSchedule(core: Core): Schedule {
  const seen = new Map<string, number>()
  const tick = async () => {
    try {
      await enqueuePeriodic(core, seen)
    } catch (e) {
      core.log.error('periodic enqueue failed', { error: String(e) })
    }
  }
  void tick()
  const cron = new Cron('*/15 * * * * *', { protect: true }, tick)
  return { tick, stop: () => cron.stop() }
}
