import { LRUCache } from 'lru-cache'
import type { Core } from '../core'
import { LocalBuckets } from '../limits/local-buckets'
import { addressBucket } from '../shared/client-address'
import type { IdentityError } from './errors'
import { MEMO_MS } from './instances'

/** How long a node trusts its count of live nodes (one read per node, whatever the instances). */
const REFRESH_MS = 5_000

/**
 * The (instance, client address) buckets a node keeps at most. A bucket is kept only for a request
 * it served, and only until it is full again (burst / rate: 4 s by default), so this is reached
 * only by a flood from tens of thousands of addresses; then the buckets nearest to full are
 * forgotten (LocalBuckets), ~8 MiB at most. The instance's own bucket still bounds what they take.
 */
const ADDRESS_BUCKETS = 50_000

/** The data plane's refusal: RFC 6749's `temporarily_unavailable` for clients, a page for browsers. */
export const rateLimitedError = (decision: Refusal): IdentityError => ({
  status: 429,
  title: 'Too many requests',
  message:
    decision.by === 'address'
      ? 'Too many requests from your network to this sign-in service right now. Try again in a few seconds.'
      : 'This sign-in service is receiving too many requests right now. Try again in a few seconds.',
  json: {
    error: 'temporarily_unavailable',
    error_description: `Rate limit reached: ${decision.rps} requests per second ${decision.by === 'address' ? 'from one client address ' : ''}for this instance. Retry in ${decision.retryAfter} s.`,
  },
})

/** Who sent a request: its client address, asked only when the limit is on (asking may cost a system call). */
export interface DataPlaneClient {
  ip(): string
}

/**
 * SPEC "Limits", the data plane: `RATE_LIMIT_DATA_PLANE_RPS` per second and a burst of
 * `RATE_LIMIT_DATA_PLANE_BURST` per identity instance, or the workspace's own rate (Pro and
 * above). A store round trip per request would cost more than the limit protects (DESIGN "Rate
 * limits"), so each node keeps a token bucket per instance in memory with the rate and burst
 * divided by the number of live nodes (counted every few seconds on the store): exact on one node,
 * approximate across several (a load balancer that spreads one instance's traffic unevenly lets
 * through less than the limit, never more than the limit times the nodes' imbalance).
 *
 * Fairness within that budget (DESIGN "Data plane fairness", issue 56: one script's ~1,000 token
 * requests left the dashboard's sign-in page answering 429 to everyone):
 * - One client address (an IPv6 /64) may take `RATE_LIMIT_DATA_PLANE_ADDRESS_SHARE` of it, rate and
 *   burst (a quarter: 12.5/s, 50 at once), in a bucket of its own per (instance, address) on each
 *   node, divided by the live nodes as the instance's is. It is checked first, and a request
 *   either bucket refuses takes from neither: an address's refusals cost the others nothing, and
 *   a client refused for the instance's sake keeps its share for later.
 * - The browser's requests keep `RATE_LIMIT_DATA_PLANE_PAGE_RESERVE` of the burst (a quarter: 50)
 *   that the JSON endpoints cannot take. One bucket with a reserve rather than two buckets of fixed
 *   shares: both kinds draw on the same budget, so a quiet instance gives token calls the whole
 *   rate (150 at once), and the instance never serves more than its budget; a JSON request is
 *   refused once the bucket is down to the reserve, a page only when it is empty. Under a token
 *   flood the bucket stays at that line: token calls get what refills above it, pages may take
 *   from below it whenever they come, so they keep their part of the rate too.
 */
export function createDataPlaneLimit(core: Core, rpsOf?: (workspaceId: string) => Promise<number | null>) {
  const { dataPlaneRps, dataPlaneBurst, dataPlaneAddressShare, dataPlanePageReserve } = core.config.rateLimits
  const buckets = new LocalBuckets()
  const addresses = new LocalBuckets(ADDRESS_BUCKETS)
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

  const decide = (
    instanceId: string,
    page: boolean,
    client: DataPlaneClient,
    entry: { rps: number | null },
    now: number,
  ): Decision => {
    const rps = entry.rps ?? dataPlaneRps
    // A workspace's own rate scales its burst alike (50/s with 200 at once → 500/s with 2,000).
    const burst = Math.max(1, (dataPlaneBurst * rps) / dataPlaneRps / nodes)
    const rate = rps / nodes
    // Synchronous from the first check to the last take: nothing runs in between. A share of 1 is
    // the instance's whole bucket: no address is asked.
    const key = dataPlaneAddressShare < 1 ? `${instanceId} ${addressBucket(client.ip())}` : null
    const share = key
      ? addresses.check(key, rate * dataPlaneAddressShare, Math.max(1, burst * dataPlaneAddressShare), now)
      : null
    if (share && !share.allowed)
      return { ...share, rps: Math.round(rps * dataPlaneAddressShare * 100) / 100, by: 'address' }
    const usable = page ? burst : Math.max(1, burst * (1 - dataPlanePageReserve))
    const whole = buckets.check(instanceId, rate, burst, now, usable)
    if (!whole.allowed) return { ...whole, rps, by: 'instance' }
    buckets.commit(instanceId, whole.tat, now)
    if (key && share) addresses.commit(key, share.tat, now)
    return { allowed: true, retryAfter: 0, rps }
  }
  // Without a promise once the instance's rate was read: this runs on every request of the plane.
  const limit: DataPlaneLimit = (instanceId, page, client) => {
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
      return entry.ready.then(() => decide(instanceId, page, client, waiting, now))
    }
    return decide(instanceId, page, client, entry, now)
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

/** Which bucket refused a request: the instance's, or its client address's share of it. */
type Refuser = 'instance' | 'address'

/** A refused request: the bucket that refused it, its rate, and when one more request fits. */
export interface Refusal {
  allowed: false
  retryAfter: number
  rps: number
  by: Refuser
}

/** The limiter's answer for a request of an instance, with the instance's rate; null: no limit. */
type Decision = { allowed: true; retryAfter: 0; rps: number } | Refusal | null

/**
 * What the bridge asks of the limiter before an instance's request. `page`: a request of a browser
 * (the authorization endpoint, the hosted pages and their assets, the device and logout pages), not
 * one of the endpoints clients call for JSON (token, introspection, revocation, userinfo, device
 * authorization, pushed authorization).
 */
export type DataPlaneLimit = (
  instanceId: string,
  page: boolean,
  client: DataPlaneClient,
) => Decision | Promise<Decision>
