// `provisioning`: workspaces created one after another with a dashboard session (POST
// /v1/workspaces, then GET /v1/workspaces/{id} every POLL_MS until active: the job worker creates
// each one's signing keys), the way the dashboard and API clients wait for one. A latency scenario:
// one sample per workspace, an absolute target, no baseline; a workspace that ends
// provisioning_failed or outlasts TIMEOUT_MS fails the run.

import { Api } from '../api'
import { cpuWindow } from '../cpu'
import { printSetup } from '../fixtures'
import { formatMs, summarize } from '../load'
import { startGatehouse } from '../process'
import { reportCpu, reportLatency, type Scenario } from '../scenario'

const COUNT = 50
const POLL_MS = 10
const TIMEOUT_MS = 10_000

interface WorkspaceOut {
  id: string
  state: string
  created_at: string
  updated_at: string
  provisioning_error: string | null
}

export default {
  description: `POST /v1/workspaces with a dashboard session, then GET /v1/workspaces/{id} every ${POLL_MS} ms until active; ${COUNT} workspaces one after another`,
  method: `one sample per workspace, POST sent → first GET answering active received (up to one poll interval of waiting included); no warm-up`,
  async run({ opts, report }) {
    const gh = await startGatehouse({ logLevel: opts.logLevel })
    try {
      const api = new Api(gh.url)
      const owner = await api.signUpOwner()
      printSetup('the platform account', api)
      const total: number[] = []
      const post: number[] = []
      const server: number[] = []
      const done = cpuWindow([gh.pid])
      for (let i = 1; i <= COUNT; i++) {
        const t0 = performance.now()
        let w = await api.asOwner<WorkspaceOut>(owner, 'POST', '/v1/workspaces', 201, { name: `bench-${i}` })
        post.push(performance.now() - t0)
        while (w.state !== 'active') {
          if (w.state !== 'provisioning' || performance.now() - t0 > TIMEOUT_MS)
            throw new Error(
              `workspace ${w.id} ${w.state} after ${(performance.now() - t0).toFixed(0)} ms: ${w.provisioning_error}`,
            )
          await Bun.sleep(POLL_MS)
          w = await api.asOwner<WorkspaceOut>(owner, 'GET', `/v1/workspaces/${w.id}`, 200)
        }
        total.push(performance.now() - t0)
        server.push(Date.parse(w.updated_at) - Date.parse(w.created_at))
      }
      reportLatency(report, 'POST → active', summarize(total), 500)
      report.print(`  POST /v1/workspaces → 201: ${formatMs(summarize(post))}`)
      report.print(
        `  server side, created_at → updated_at as it became active: ${formatMs(summarize(server))}`,
      )
      reportCpu(report, done(), COUNT, 'workspace')
    } finally {
      await gh.stop()
    }
  },
} satisfies Scenario
