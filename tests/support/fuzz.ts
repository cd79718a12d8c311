// A seeded HTTP fuzzer over every route of /openapi.json, the dashboard forms and the identity
// plane's endpoints (cases: fuzz-cases.ts). Shared by tests/fuzz.test.ts (a bounded run in the
// suite) and the `fuzz` scenario of scripts/bench.ts.
import { type FuzzCase, type FuzzRoute, type FuzzTargets, fuzzCases } from './fuzz-cases'
import type { JsonSchema } from './fuzz-values'

export type { FuzzRoute, FuzzTargets } from './fuzz-cases'

export interface FuzzFinding {
  /** `METHOD /template`, as in FuzzCase. */
  route: string
  method: string
  url: string
  status: number
  problem: string
  request: string
  response: string
}

export interface FuzzReport {
  seed: number
  requests: number
  seconds: number
  statuses: Map<number, number>
  /** Status counts per route (`METHOD /template`). */
  byRoute: Map<string, Map<number, number>>
  findings: FuzzFinding[]
}

/** The routes of the control plane's OpenAPI document, with their JSON body schemas. */
export async function loadRoutes(baseUrl: string): Promise<FuzzRoute[]> {
  const doc = (await (await fetch(`${baseUrl}/openapi.json`)).json()) as {
    paths: Record<
      string,
      Record<string, { requestBody?: { content?: Record<string, { schema?: JsonSchema }> } }>
    >
  }
  const routes: FuzzRoute[] = []
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(operations)) {
      routes.push({
        method: method.toUpperCase(),
        path,
        body: op.requestBody?.content?.['application/json']?.schema,
      })
    }
  }
  return routes
}

// What a leaked stack trace looks like: V8/JSC frames, source paths with a line, our tree, and
// the error page Bun.serve shows in development mode (source and stack of the exception).
const LEAKS: [RegExp, string][] = [
  [/^\s*at .+[(\s]\/?[\w./-]+:\d+(:\d+)?\)?\s*$/m, 'a stack frame'],
  [/\.(ts|tsx|js|mjs|cjs):\d+/, 'a source path with a line number'],
  [/\.tsx?:/, 'a .ts path'],
  [/node_modules\//, 'a node_modules path'],
  [/\/src\/[\w./-]+\.tsx?\b/, 'a source path'],
  [/__bunfallback/, "Bun's development error page"],
]

/** Why a response is a finding (a 5xx, a leaked stack), or null. */
export function responseProblem(status: number, text: string): string | null {
  if (status >= 500) return `HTTP ${status}`
  for (const [re, what] of LEAKS) if (re.test(text)) return `${what} in the body`
  return null
}

const describe = (c: FuzzCase) =>
  `${c.method} ${c.url.slice(0, 300)}\n${c.headers.map(([k, v]) => `${k}: ${v.slice(0, 120)}`).join('\n')}\n\n${(c.body ?? '').slice(0, 400)}`

async function send(c: FuzzCase): Promise<{ status: number; text: string }> {
  const headers = new Headers()
  for (const [name, value] of c.headers) headers.append(name, value)
  const res = await fetch(c.url, { method: c.method, headers, body: c.body, redirect: 'manual' })
  return { status: res.status, text: await res.text() }
}

/** Sends the cases of `seed` over `concurrency` connections; collects statuses and findings. */
export async function runFuzz(
  t: FuzzTargets,
  opts: { seed: number; count: number; concurrency?: number },
): Promise<FuzzReport> {
  const cases = fuzzCases(t, opts.seed, opts.count)
  const statuses = new Map<number, number>()
  const byRoute = new Map<string, Map<number, number>>()
  const findings: FuzzFinding[] = []
  let next = 0
  const started = performance.now()
  const worker = async () => {
    while (next < cases.length) {
      const c = cases[next++] as FuzzCase
      let status = 0
      let text = ''
      try {
        ;({ status, text } = await send(c))
      } catch (e) {
        text = `fetch failed: ${(e as Error).message}`
      }
      statuses.set(status, (statuses.get(status) ?? 0) + 1)
      const perRoute = byRoute.get(c.route) ?? new Map<number, number>()
      byRoute.set(c.route, perRoute.set(status, (perRoute.get(status) ?? 0) + 1))
      const problem = status === 0 ? text : responseProblem(status, text)
      if (problem) {
        const path = new URL(c.url).pathname
        findings.push({
          route: c.route,
          method: c.method,
          url: path,
          status,
          problem,
          request: describe(c),
          response: text.slice(0, 600),
        })
      }
    }
  }
  await Promise.all(Array.from({ length: opts.concurrency ?? 8 }, worker))
  const seconds = (performance.now() - started) / 1000
  return { seed: opts.seed, requests: cases.length, seconds, statuses, byRoute, findings }
}

const histogram = (statuses: Map<number, number>) =>
  [...statuses]
    .sort(([a], [b]) => a - b)
    .map(([s, n]) => `${s || 'no answer'}: ${n}`)
    .join(', ')

/** The report as lines: rate, status histogram (per route too, with `perRoute`), each finding. */
export function formatReport(report: FuzzReport, { perRoute = false } = {}): string[] {
  const lines = [
    `fuzz seed ${report.seed}: ${report.requests} requests in ${report.seconds.toFixed(1)} s (${(report.requests / report.seconds).toFixed(0)} req/s)`,
    `statuses: ${histogram(report.statuses)}`,
  ]
  if (perRoute) {
    for (const [route, statuses] of [...report.byRoute].sort(([a], [b]) => a.localeCompare(b)))
      lines.push(`  ${route}: ${histogram(statuses)}`)
  }
  lines.push(`findings: ${report.findings.length}`)
  // One example per kind of finding: a flood of the same 500 would bury the others.
  const kinds = new Map<string, { count: number; first: FuzzFinding }>()
  for (const f of report.findings) {
    const key = `${f.problem}: ${f.route}`
    const kind = kinds.get(key)
    if (kind) kind.count++
    else kinds.set(key, { count: 1, first: f })
  }
  for (const [key, { count, first }] of kinds) {
    lines.push(`--- ${key} ×${count}, e.g.\n${first.request}\n>>> ${first.status} ${first.response}`)
  }
  return lines
}
