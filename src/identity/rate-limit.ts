import { LRUCache } from 'lru-cache'
import type { Core } from '../core'
import { LocalBuckets, type LocalDecision } from '../limits/local-buckets'
import type { IdentityError } from './errors'
import { MEMO_MS } from './instances'

/** How long a node trusts its count of live nodes (one read per node, whatever the instances). */
const REFRESH_MS = 5_000

/** The data plane's refusal: RFC 6749's `temporarily_unavailable` for clients, a page for browsers. */
export const rateLimitedError = (rps: number, retryAfter: number): IdentityError => ({
  status: 429,
  title: 'Too many requests',
  message: 'This sign-in service is receiving too many requests right now. Try again in a few seconds.',
  json: {
    error: 'temporarily_unavailable',
    error_description: `Rate limit reached: ${rps} requests per second for this instance. Retry in ${retryAfter} s.`,
  },
})

/**
 * SPEC "Limits", the data plane: `RATE_LIMIT_DATA_PLANE_RPS` per second and a burst of
 * `RATE_LIMIT_DATA_PLANE_BURST` per identity instance, or the workspace's own rate (Pro and
 * above). A store round trip per request would cost more than the limit protects (DESIGN "Rate
 * limits"), so each node keeps a token bucket per instance in memory with the rate and burst
 * divided by the number of live nodes (counted every few seconds on the store): exact on one node,
 * approximate across several (a load balancer that spreads one instance's traffic unevenly lets
 * through less than the limit, never more than the limit times the nodes' imbalance).
 */
export function createDataPlaneLimit(core: Core, rpsOf?: (workspaceId: string) => Promise<number | null>) {
  const { dataPlaneRps, dataPlaneBurst } = core.config.rateLimits
  const buckets = new LocalBuckets()
  let nodes = 1
  let nodesAt = Number.NEGATIVE_INFINITY
  /** Each instance's own rate as last read; `loaded` once a read came back. */
  // Bounded: requests to made-up instance ids reach this before the pool says they do not exist.
  const own = new LRUCache<string, { rps: number | null; at: number; loaded: boolean; ready: Promise<void> }>(
    {
      max: 20_000,
    },
  )

  // Refreshed in the background: a request never waits on these reads after the first.
  const refreshNodes = (now: number) => {
    nodesAt = now
    core.store.liveNodes().then(
      (n) => {
        nodes = n
      },
      () => {},
    )
  }
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

  const decide = (instanceId: string, entry: { rps: number | null }, now: number): Decision => {
    const rps = entry.rps ?? dataPlaneRps
    // A workspace's own rate scales its burst alike (50/s with 200 at once → 500/s with 2,000).
    const burst = (dataPlaneBurst * rps) / dataPlaneRps
    const decision = buckets.take(instanceId, rps / nodes, Math.max(1, burst / nodes), now)
    return { ...decision, rps }
  }
  // Without a promise once the instance's rate was read: this runs on every request of the plane.
  const limit: DataPlaneLimit = (instanceId) => {
    if (dataPlaneRps <= 0) return null
    const now = core.clock.now()
    if (now - nodesAt > REFRESH_MS) refreshNodes(now)
    let entry = own.get(instanceId)
    // An instance's own rate is trusted as long as the rest of what a node remembers of it
    // (MEMO_MS): every write of it forgets it at once on every node (`core.instances`). Read again
    // every 5 s, tokens at random over 10,000 instances read a row for most tokens.
    if (!entry || now - entry.at > MEMO_MS) entry = readOwn(instanceId, now)
    if (!entry.loaded) {
      const waiting = entry
      return entry.ready.then(() => decide(instanceId, waiting, now))
    }
    return decide(instanceId, entry, now)
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

/** The limiter's answer for a request of an instance, with the rate it applied; null: no limit. */
type Decision = (LocalDecision & { rps: number }) | null

/** What the bridge asks of the limiter before an instance's request. */
export type DataPlaneLimit = (instanceId: string) => Decision | Promise<Decision>
