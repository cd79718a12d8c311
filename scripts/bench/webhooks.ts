// The webhook-deliveries scenario: events emitted straight into a running server's store (as the
// product's emit() does: the event, one delivery per subscribed endpoint and its job, in one
// transaction) and posted by the server's job worker to receivers on loopback in this process.

import { count, eq } from 'drizzle-orm'
import { loadConfig } from '../../src/config'
import { createCore } from '../../src/core'
import { webhookDeliveries, webhooks } from '../../src/events/schema'
import { newId, newWorkspaceId } from '../../src/shared/ids'
import { createLogger } from '../../src/shared/logger'

export interface DeliveryRun {
  /** Deliveries expected (events × endpoints) and received (distinct endpoint and event id). */
  expected: number
  received: number
  /** Received more than once (at-least-once allows it; counted, not an error). */
  duplicates: number
  /** Rows in state delivered once all arrived. */
  delivered: number
  /** ms from each event's emit (its created_at) to its receipt, per delivery. */
  latencies: number[]
  /** Deliveries per second between the first and the last receipt. */
  rate: number
  /** Seconds from the first emit to the last receipt. */
  seconds: number
}

/**
 * `endpoints` endpoints of one workspace, each subscribed to tenant.created, and `events` events
 * emitted in transactions of `batch`; waits (up to `timeoutMs`) until every delivery arrived.
 */
export async function runDeliveries(
  env: Record<string, string | undefined>,
  opts: { endpoints: number; events: number; batch: number; timeoutMs: number },
): Promise<DeliveryRun> {
  const receipts = new Map<string, number>()
  let duplicates = 0
  let first = Number.POSITIVE_INFINITY
  let last = 0
  const receiver = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      await req.arrayBuffer()
      const key = `${new URL(req.url).pathname} ${req.headers.get('service-webhook-id')}`
      const now = Date.now()
      if (receipts.has(key)) duplicates++
      else receipts.set(key, now)
      first = Math.min(first, now)
      last = Math.max(last, now)
      return new Response(null, { status: 204 })
    },
  })
  const core = createCore(loadConfig(env), { log: createLogger('error') })
  try {
    const workspaceId = newWorkspaceId()
    const now = Date.now()
    for (let i = 0; i < opts.endpoints; i++) {
      const id = newId('wh', now)
      await core.db.insert(webhooks).values({
        id,
        workspaceId,
        url: `http://127.0.0.1:${receiver.port}/hook/${i}`,
        events: ['tenant.created'],
        enabled: true,
        secretSealed: core.secrets.seal(`whsec_bench${i}`, `webhook:${id}`),
        createdAt: now,
        updatedAt: now,
      })
    }
    const emitted = new Map<string, number>()
    const started = Date.now()
    for (let done = 0; done < opts.events; done += opts.batch) {
      const list = Array.from({ length: Math.min(opts.batch, opts.events - done) }, (_, i) => ({
        type: 'tenant.created' as const,
        data: { n: done + i },
      }))
      const at = Date.now()
      for (const id of await core.emit.many(workspaceId, list)) emitted.set(id, at)
    }
    const expected = opts.events * opts.endpoints
    const deadline = Date.now() + opts.timeoutMs
    while (receipts.size < expected && Date.now() < deadline) await Bun.sleep(50)
    const latencies = [...receipts].map(([key, at]) => at - (emitted.get(key.split(' ')[1]!) ?? at))
    // The outcome rows are written right after each answer: let the last ones land.
    let delivered = 0
    for (let i = 0; i < 40 && delivered < receipts.size; i++) {
      const [row] = await core.db
        .select({ n: count() })
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.status, 'delivered'))
      delivered = Number(row?.n ?? 0)
      if (delivered < receipts.size) await Bun.sleep(50)
    }
    return {
      expected,
      received: receipts.size,
      duplicates,
      delivered,
      latencies,
      rate: receipts.size > 1 ? ((receipts.size - 1) * 1000) / Math.max(1, last - first) : 0,
      seconds: (last - started) / 1000,
    }
  } finally {
    receiver.stop(true)
    await core.store.close()
  }
}
