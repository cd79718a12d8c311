import { LRUCache } from 'lru-cache'
import type { Clock } from '../shared/clock'
import type { InstanceChanges } from '../shared/instance-changes'
import type { Decision } from './decision'
import type { Limiter } from './limiter'

/** Who sent a request: its client address, asked only when the limit is on (asking may cost a system call). */
interface DataPlaneClient {
  ip(): string
}

/** The limiter's answer for a request of an instance; null: the data plane has no limit. */
type DataPlaneDecision = Decision | null

/**
 * What the bridge asks of the limiter before an instance's request (`page`: a browser's request,
 * see `NodeCall`).
 */
export type DataPlaneLimit = (
  instanceId: string,
  page: boolean,
  client: DataPlaneClient,
) => DataPlaneDecision | Promise<DataPlaneDecision>

/**
 * The data plane's bucket (`dataPlane`, one per instance), at each instance's own rate: read once
 * through `rpsOf` (the pool's read of the instance, null: the default rate), then trusted for
 * `memoMs`, as long as the rest of what a node remembers of the instance; every write of it
 * forgets it at once on every node (`instances`).
 */
export function createDataPlaneLimit(
  core: { limiter: Limiter; clock: Clock; instances: Pick<InstanceChanges, 'subscribe'> },
  memoMs: number,
  rpsOf?: (instanceId: string) => Promise<number | null>,
) {
  const { limiter, clock } = core
  /** Each instance's own rate as last read; `loaded` once a read came back. */
  // Bounded: requests to made-up instance ids reach this before the pool says they do not exist.
  const own = new LRUCache<string, { rps: number | null; at: number; loaded: boolean; ready: Promise<void> }>(
    {
      max: 20_000,
    },
  )

  /** Reads an instance's own rate; until the first read is back, every request of it waits on it. */
  const readOwn = (instanceId: string, now: number) => {
    const previous = own.get(instanceId)
    const entry = {
      rps: previous?.rps ?? null,
      at: now,
      loaded: previous?.loaded ?? false,
      ready: Promise.resolve(),
    }
    entry.ready = (rpsOf?.(instanceId) ?? Promise.resolve(null)).then(
      (rps) => {
        entry.rps = rps
        entry.loaded = true
      },
      () => {
        entry.loaded = true
      },
    )
    own.set(instanceId, entry)
    return entry
  }
  core.instances.subscribe((instanceId) => {
    if (instanceId === null) own.clear()
    else own.delete(instanceId)
  })

  // Without a promise once the instance's rate was read: this runs on every request of the plane.
  const limit: DataPlaneLimit = (instanceId, page, client) => {
    if (limiter.buckets.dataPlane.rps <= 0) return null
    const now = clock.now()
    let entry = own.get(instanceId)
    // Read again every 5 s, tokens at random over 10,000 instances would read a row for most tokens.
    if (!entry || now - entry.at > memoMs) entry = readOwn(instanceId, now)
    const address = () => client.ip()
    if (!entry.loaded) {
      const waiting = entry
      return entry.ready.then(() =>
        limiter.take('dataPlane', instanceId, { page, address, rps: waiting.rps }, now),
      )
    }
    return limiter.take('dataPlane', instanceId, { page, address, rps: entry.rps }, now)
  }
  /**
   * An instance's own rate as the pool read it, at `at`, with the instance's state
   * (`InstancePool.onState`): remembered as a read of its own, so the first request after a
   * discovery does not read it again.
   */
  const heard = (instanceId: string, rps: number | null, at: number) => {
    const entry = own.get(instanceId)
    if (entry) Object.assign(entry, { rps, at, loaded: true })
    else own.set(instanceId, { rps, at, loaded: true, ready: Promise.resolve() })
  }
  return Object.assign(limit, { heard })
}
