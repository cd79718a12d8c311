// Provisioning latency through the JSON API: create workspaces one after another with a dashboard
// session and poll each until it is `active`, the way the dashboard and API clients wait for one.
import { percentile } from './checked-load'
import type { BenchSession } from './setup'

export interface ProvisioningOptions {
  count: number
  /** Pause between the end of one GET and the next. */
  pollMs: number
  /** A workspace still not `active` after this long fails the run. */
  timeoutMs: number
}

export interface Percentiles {
  p50: number
  p95: number
  max: number
}

export interface ProvisioningResult {
  /** POST /v1/workspaces sent → the GET that first answered `active` received, ms. */
  total: Percentiles
  /** POST sent → its 201 received, ms. */
  post: Percentiles
  /** The server's own record: created_at → updated_at of the row as it became active (ms resolution). */
  server: Percentiles
  /** GETs per workspace until `active`. */
  polls: Percentiles
  count: number
}

interface WorkspaceOut {
  id: string
  state: string
  created_at: string
  updated_at: string
  provisioning_error: string | null
}

export const summarize = (values: number[]): Percentiles => {
  const sorted = Float64Array.from(values).sort()
  return { p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95), max: sorted[sorted.length - 1] ?? 0 }
}

async function json(res: Response, want: number, what: string): Promise<WorkspaceOut> {
  const body = await res.text()
  if (res.status !== want) throw new Error(`${what} answered HTTP ${res.status}: ${body.slice(0, 300)}`)
  return JSON.parse(body) as WorkspaceOut
}

/** Throws (naming the workspace) when one ends `provisioning_failed`, or outlasts `timeoutMs`. */
export async function measureProvisioning(
  baseUrl: string,
  session: BenchSession,
  opts: ProvisioningOptions,
): Promise<ProvisioningResult> {
  const total: number[] = []
  const post: number[] = []
  const server: number[] = []
  const polls: number[] = []
  const read = { cookie: session.cookie }
  const write = { ...read, 'x-csrf-token': session.csrfToken, 'content-type': 'application/json' }
  for (let i = 1; i <= opts.count; i++) {
    const name = `bench-${i}`
    const t0 = performance.now()
    let w = await json(
      await fetch(`${baseUrl}/v1/workspaces`, {
        method: 'POST',
        headers: write,
        body: JSON.stringify({ name }),
      }),
      201,
      `POST /v1/workspaces (${name})`,
    )
    post.push(performance.now() - t0)
    let n = 0
    while (w.state !== 'active') {
      if (w.state !== 'provisioning')
        throw new Error(
          `workspace ${name} (${w.id}) ended ${w.state} after ${(performance.now() - t0).toFixed(0)} ms: ${w.provisioning_error ?? 'no provisioning_error'}`,
        )
      if (performance.now() - t0 > opts.timeoutMs)
        throw new Error(`workspace ${name} (${w.id}) still provisioning after ${opts.timeoutMs} ms`)
      await Bun.sleep(opts.pollMs)
      n++
      w = await json(
        await fetch(`${baseUrl}/v1/workspaces/${w.id}`, { headers: read }),
        200,
        `GET /v1/workspaces/${w.id}`,
      )
    }
    const elapsed = performance.now() - t0
    if (elapsed > opts.timeoutMs)
      throw new Error(`workspace ${name} (${w.id}) took ${elapsed.toFixed(0)} ms to become active`)
    total.push(elapsed)
    server.push(Date.parse(w.updated_at) - Date.parse(w.created_at))
    polls.push(n)
  }
  return {
    total: summarize(total),
    post: summarize(post),
    server: summarize(server),
    polls: summarize(polls),
    count: opts.count,
  }
}
