import type { Store } from '../db/store'
import { addressBucket } from '../shared/client-address'
import type { NodeBucket } from './buckets'
import type { Decision } from './decision'
import { LocalBuckets } from './local-buckets'

/** How long a node trusts its count of live nodes (one read per node, whatever the instances). */
const REFRESH_MS = 5_000

/**
 * The (instance, client address) buckets a node keeps at most. A bucket is kept only for a request
 * it served, and only until it is full again (burst / rate: 4 s by default), so this is reached
 * only by a flood from tens of thousands of addresses; then the buckets nearest to full are
 * forgotten (LocalBuckets), ~8 MiB at most. The instance's own bucket still bounds what they take.
 */
const ADDRESS_BUCKETS = 50_000

/** A node bucket's check of one request. */
export interface NodeCall {
  /**
   * A browser's request (the authorization endpoint, the hosted pages and their assets, the device
   * and logout pages), which may take the page reserve; not one of the endpoints clients call for
   * JSON (token, introspection, revocation, userinfo, device authorization, pushed authorization).
   */
  page: boolean
  /** The client's address, asked only when an address has a share (asking may cost a system call). */
  address: () => string
  /** The key's own rate (a workspace's `data_plane_rps`); null: the bucket's. */
  rps: number | null
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
export function nodeLimiter(store: Pick<Store, 'liveNodes'>) {
  const buckets = new LocalBuckets()
  const addresses = new LocalBuckets(ADDRESS_BUCKETS)
  let nodes = 1
  let nodesAt = Number.NEGATIVE_INFINITY
  // Refreshed in the background: a request never waits on this read.
  const refreshNodes = (now: number) => {
    nodesAt = now
    store.liveNodes().then(
      (n) => {
        nodes = n
      },
      () => {},
    )
  }

  /** Synchronous from the first check to the last take: nothing runs in between. */
  return (bucket: NodeBucket, key: string, call: NodeCall, now: number): Decision => {
    if (now - nodesAt > REFRESH_MS) refreshNodes(now)
    const { addressShare, pageReserve } = bucket
    const rps = call.rps ?? bucket.rps
    // A workspace's own rate scales its burst alike (50/s with 200 at once → 500/s with 2,000).
    const burst = Math.max(1, (bucket.burst * rps) / bucket.rps / nodes)
    const rate = rps / nodes
    // A share of 1 is the instance's whole bucket: no address is asked.
    const addressKey = addressShare < 1 ? `${key} ${addressBucket(call.address())}` : null
    const share = addressKey
      ? addresses.check(addressKey, rate * addressShare, Math.max(1, burst * addressShare), now)
      : null
    if (share && !share.allowed)
      return refused('address', Math.round(rps * addressShare * 100) / 100, share, now)
    const usable = call.page ? burst : Math.max(1, burst * (1 - pageReserve))
    const whole = buckets.check(key, rate, burst, now, usable)
    if (!whole.allowed) return refused('instance', rps, whole, now)
    buckets.commit(key, whole.tat, now)
    if (addressKey && share) addresses.commit(addressKey, share.tat, now)
    const interval = 1000 / rate
    return {
      allowed: true,
      name: 'instance',
      limit: rps,
      remaining: Math.max(0, Math.floor((usable * interval - (whole.tat - now)) / interval)),
      resetAt: Math.ceil(whole.tat / 1000),
      retryAfter: 0,
    }
  }
}

const refused = (name: string, rps: number, check: { retryAfter: number }, now: number): Decision => ({
  allowed: false,
  name,
  limit: rps,
  remaining: 0,
  resetAt: Math.ceil(now / 1000) + check.retryAfter,
  retryAfter: check.retryAfter,
})
