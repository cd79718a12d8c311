import type { Conn } from '../db/store'
import type { WindowBucket } from './buckets'
import type { Decision } from './decision'

/** A window bucket's check, inside the caller's transaction. */
export interface WindowCall {
  /** The caller's transaction, holding the key's lock (`serialize`): the count is exact across nodes. */
  tx: Conn
  /** Whose the key is: its rows go with the workspace. */
  workspaceId: string
  /** Requests of the key in flight now; asked only when the window has room. */
  inFlight: () => Promise<number>
}

/** A window bucket's decision, with the moment (ms) to try again: a full cap in flight waits 250 ms, not whole seconds. */
export type WindowDecision = Decision & { retryAt: number }

const IN_WINDOW =
  'SELECT second, attempts FROM webhook_rate WHERE webhook_id = $1 AND second >= $2 ORDER BY second'
const COUNT_SECOND = `
  INSERT INTO webhook_rate (webhook_id, workspace_id, second, attempts) VALUES ($1, $2, $3, 1)
  ON CONFLICT (webhook_id, second) DO UPDATE SET attempts = webhook_rate.attempts + 1`

/** How long a key whose requests in flight are at the cap waits before it is asked again. */
const IN_FLIGHT_WAIT_MS = 250

/**
 * Requests of a key (a webhook endpoint) in a rolling window of whole seconds, one row per busy
 * second (`webhook_rate`), read and counted in the caller's transaction: the window must have
 * room, then the key's requests in flight must be under the cap, then the request counts in its
 * second. Refused, it says when to come back: when enough of the window's oldest seconds have left
 * it, or shortly for the cap.
 */
export async function takeWindow(
  bucket: WindowBucket,
  key: string,
  call: WindowCall,
  now: number,
): Promise<WindowDecision> {
  const second = Math.floor(now / 1000)
  const first = second - bucket.seconds + 1
  const rows = await call.tx.query<{ second: number; attempts: number }>(IN_WINDOW, [key, first])
  let inWindow = rows.reduce((sum, b) => sum + Number(b.attempts), 0)
  const decision = (allowed: boolean, remaining: number, resetAt: number, retryAt: number) => ({
    allowed,
    name: 'endpoint',
    limit: bucket.limit,
    remaining,
    resetAt,
    retryAfter: allowed ? 0 : Math.max(1, Math.ceil((retryAt - now) / 1000)),
    retryAt,
  })
  if (inWindow >= bucket.limit) {
    let leaves = first
    for (const b of rows) {
      inWindow -= Number(b.attempts)
      leaves = Number(b.second)
      if (inWindow < bucket.limit) break
    }
    const at = leaves + bucket.seconds
    return decision(false, 0, at, at * 1000)
  }
  if ((await call.inFlight()) >= bucket.concurrency)
    return decision(false, 0, Math.ceil((now + IN_FLIGHT_WAIT_MS) / 1000), now + IN_FLIGHT_WAIT_MS)
  await call.tx.exec(COUNT_SECOND, [key, call.workspaceId, second])
  const oldest = rows.length ? Number(rows[0]!.second) : second
  return decision(true, bucket.limit - inWindow - 1, oldest + bucket.seconds, now)
}
