// `webhook-deliveries`, as a user causes deliveries: a workspace and its endpoints created through
// the API, tenants created with POST …/tenants:batch (each one emits tenant.created, a batch in one
// transaction), and every delivery posted by the server's job worker to receivers on loopback in
// this process. A lost delivery, or a row not ending `delivered`, is counted as an error.
import { Api } from '../api'
import { cpuWindow } from '../cpu'
import { summarize } from '../load'
import { startGatehouse } from '../process'
import { reportCpu, reportLatency, type Scenario } from '../scenario'

const EVENTS = 2_000
const ENDPOINTS = 10
const BATCH = 100

interface DeliveryRun {
  /** Deliveries expected (events × endpoints) and received (distinct endpoint and event id). */
  expected: number
  received: number
  /** Received more than once (at-least-once allows it; counted, not an error). */
  duplicates: number
  /** Rows in state delivered once all arrived. */
  delivered: number
  /** ms from the batch that made each event sent to its receipt, per delivery. */
  latencies: number[]
  /** Deliveries per second between the first and the last receipt. */
  rate: number
  /** Seconds from the first batch sent to the last receipt. */
  seconds: number
  /** The API's answers by status, setup and batches (api.ts). */
  setup: string
}

/**
 * `endpoints` endpoints of a new workspace, each subscribed to tenant.created, and `events` tenants
 * created in batches of `batch`; waits (up to `timeoutMs`) until every delivery arrived.
 */
async function runDeliveries(
  origin: string,
  opts: { endpoints: number; events: number; batch: number; timeoutMs: number },
): Promise<DeliveryRun> {
  const receipts = new Map<string, number>()
  /** The batch each delivery's tenant came in (its slug `t-<batch>-<n>`). */
  const batchOf = new Map<string, number>()
  let duplicates = 0
  let first = Number.POSITIVE_INFINITY
  let last = 0
  const receiver = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const { data } = (await req.json()) as { data: { slug: string } }
      const key = `${new URL(req.url).pathname} ${req.headers.get('service-webhook-id')}`
      const now = Date.now()
      if (receipts.has(key)) duplicates++
      else {
        receipts.set(key, now)
        batchOf.set(key, Number(data.slug.split('-')[1]))
      }
      first = Math.min(first, now)
      last = Math.max(last, now)
      return new Response(null, { status: 204 })
    },
  })
  try {
    const api = new Api(origin)
    const owner = await api.signUpOwner()
    const { workspaceId } = await api.createWorkspace(owner)
    const hooks: string[] = []
    for (let i = 0; i < opts.endpoints; i++) {
      const hook = await api.asOwner<{ id: string }>(
        owner,
        'POST',
        `/v1/workspaces/${workspaceId}/webhooks`,
        201,
        {
          url: `http://127.0.0.1:${receiver.port}/hook/${i}`,
          events: ['tenant.created'],
        },
      )
      hooks.push(hook.id)
    }
    const sent: number[] = []
    const started = Date.now()
    for (let b = 0; b * opts.batch < opts.events; b++) {
      const items = Array.from({ length: Math.min(opts.batch, opts.events - b * opts.batch) }, (_, i) => ({
        slug: `t-${b}-${i}`,
        name: `Tenant ${b}.${i}`,
      }))
      sent.push(Date.now())
      const made = await api.asOwner<{ created: number }>(
        owner,
        'POST',
        `/v1/workspaces/${workspaceId}/tenants:batch`,
        200,
        items,
      )
      if (made.created !== items.length)
        throw new Error(`batch ${b} created ${made.created} of ${items.length}`)
    }
    const expected = opts.events * opts.endpoints
    const deadline = Date.now() + opts.timeoutMs
    while (receipts.size < expected && Date.now() < deadline) await Bun.sleep(50)
    const latencies = [...receipts].map(([key, at]) => at - (sent[batchOf.get(key)!] ?? at))
    // The outcome rows are written right after each answer: let the last ones land.
    const deliveredRows = async () => {
      let n = 0
      for (const hook of hooks) {
        const page = await api.asOwner<{ total: number }>(
          owner,
          'GET',
          `/v1/workspaces/${workspaceId}/webhooks/${hook}/deliveries?status=delivered&limit=1`,
          200,
        )
        n += page.total
      }
      return n
    }
    let delivered = 0
    for (let i = 0; i < 40 && delivered < receipts.size; i++) {
      delivered = await deliveredRows()
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
      setup: String(api.statuses),
    }
  } finally {
    receiver.stop(true)
  }
}

export default {
  description: `${EVENTS} tenants created with POST …/tenants:batch, ${BATCH} a batch, to ${ENDPOINTS} endpoints of one workspace on loopback receivers in the bench process: ${EVENTS * ENDPOINTS} signed POSTs by the server's job worker (JOB_CONCURRENCY=64), the per-endpoint cap raised out of reach, on SQLite`,
  method:
    'one sample per delivery: the batch that made its event sent → its POST received; the rate counts distinct deliveries between the first and the last receipt',
  async run({ opts, report }) {
    const gh = await startGatehouse({
      logLevel: opts.logLevel,
      env: {
        WEBHOOKS_ALLOW_HTTP: 'true',
        WEBHOOKS_ALLOW_PRIVATE: 'true',
        WEBHOOK_RATE_PER_MINUTE: '1000000',
        WEBHOOK_ENDPOINT_CONCURRENCY: '64',
        JOB_CONCURRENCY: '64',
      },
    })
    try {
      const done = cpuWindow([gh.pid])
      const r = await runDeliveries(gh.url, {
        endpoints: ENDPOINTS,
        events: EVENTS,
        batch: BATCH,
        timeoutMs: 180_000,
      })
      const lost = r.expected - r.received
      report.errors(lost + (r.received - r.delivered))
      report.print(
        `${r.received} of ${r.expected} received, ${lost} lost, ${r.duplicates} twice; ${r.delivered} rows delivered`,
      )
      report.print(`the API (setup, batches, delivery counts): ${r.setup}`)
      reportLatency(report, 'batch sent → delivery received', summarize(r.latencies), 30_000)
      report.figure('deliveries/s', r.rate, 'deliveries/s')
      report.target('>= 1000 deliveries/s', r.rate >= 1_000, `${r.rate.toFixed(0)} deliveries/s`)
      report.target(
        'no delivery lost',
        lost === 0 && r.delivered === r.expected,
        `${lost} lost, ${r.delivered} of ${r.expected} rows delivered`,
      )
      reportCpu(report, done(), r.received, 'delivery')
    } finally {
      await gh.stop()
    }
  },
} satisfies Scenario
