// `tenants-batch`: POST /v1/workspaces/{id}/tenants:batch with BATCH_ITEMS new tenants each (every
// one with its tenant.created event and audit row), BATCH_COUNT batches one after another with a
// dashboard session. A latency scenario: one sample per batch, every item checked created.
import { cpuWindow } from '../cpu'
import { gatehouseWithOwnedWorkspace } from '../fixtures'
import { summarize } from '../load'
import { reportCpu, reportLatency, type Scenario } from '../scenario'

const BATCH_COUNT = 40
/** SPEC: at most 100 a batch. */
const BATCH_ITEMS = 100

export default {
  description: `POST /v1/workspaces/{id}/tenants:batch with ${BATCH_ITEMS} new tenants each, ${BATCH_COUNT} batches one after another with a dashboard session, on SQLite`,
  method: 'one sample per batch, request sent → 200 received; the batch limit out of reach',
  async run({ opts, report }) {
    const { gh, session, ws } = await gatehouseWithOwnedWorkspace(opts, 1)
    try {
      const url = `${gh.url}/v1/workspaces/${ws.workspaceId}/tenants:batch`
      const headers = {
        cookie: session.cookie,
        'x-csrf-token': session.csrfToken,
        'content-type': 'application/json',
      }
      const samples: number[] = []
      const done = cpuWindow([gh.pid])
      for (let b = 0; b < BATCH_COUNT; b++) {
        const items = Array.from({ length: BATCH_ITEMS }, (_, i) => ({
          slug: `t-${b}-${i}`,
          name: `Tenant ${b}.${i}`,
        }))
        const started = performance.now()
        const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(items) })
        const body = (await res.json()) as { created?: number }
        samples.push(performance.now() - started)
        if (res.status !== 200 || body.created !== BATCH_ITEMS)
          throw new Error(`batch ${b} answered ${res.status}: ${JSON.stringify(body).slice(0, 300)}`)
      }
      reportLatency(report, `a batch of ${BATCH_ITEMS}`, summarize(samples), 100)
      reportCpu(report, done(), BATCH_COUNT, 'batch')
    } finally {
      await gh.stop()
    }
  },
} satisfies Scenario
