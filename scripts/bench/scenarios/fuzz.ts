// `fuzz`: --requests hostile requests (tests/support/fuzz.ts, seeded by --seed) over every route of
// /openapi.json, the dashboard forms and the identity endpoints of the platform instance and a
// workspace instance, with the session of an account signed up on the hosted pages. The target is
// no 5xx and no leaked stack; the rate and the status histogram are printed. tests/fuzz.test.ts runs
// the same fuzzer in the suite.
import { formatReport, loadRoutes, runFuzz } from '../../../tests/support/fuzz'
import { Api } from '../api'
import { cpuWindow } from '../cpu'
import { printSetup } from '../fixtures'
import { startGatehouse } from '../process'
import type { Scenario } from '../scenario'

export default {
  description:
    'hostile requests (bodies, headers, cookies, path ids) over every route of /openapi.json, the dashboard forms and the identity endpoints of the platform instance and a workspace instance',
  async run({ opts, report }) {
    const gh = await startGatehouse({ logLevel: opts.logLevel })
    try {
      const api = new Api(gh.url)
      const session = await api.signUpOwner()
      const fuzzed = await api.createWorkspace(session)
      const identity = await api.createWorkspace(session)
      const foreign = await api.createWorkspace(await api.signUpOwner())
      printSetup('the workspaces', api)
      const apps = await api.asOwner<{ items: { id: string }[] }>(
        session,
        'GET',
        `/v1/workspaces/${fuzzed.workspaceId}/apps`,
        200,
      )
      const [cookieName, cookie] = session.cookie.split(/=(.*)/s) as [string, string]
      report.print(`${opts.requests} requests, seed ${opts.seed}, ${opts.connections} connections`)
      const done = cpuWindow([gh.pid])
      const fuzz = await runFuzz(
        {
          baseUrl: gh.url,
          routes: await loadRoutes(gh.url),
          session: { cookieName, cookie, csrf: session.csrfToken },
          ids: {
            workspace: [fuzzed.workspaceId],
            foreignWorkspace: [foreign.workspaceId],
            app: apps.items.map((a) => a.id),
          },
          instances: [
            { id: 'platform', clientId: 'gatehouse-console', redirectUri: `${gh.url}/v1/auth/callback` },
            { id: identity.workspaceId, clientId: identity.clientId, redirectUri: 'https://rp.example/cb' },
          ],
        },
        { seed: opts.seed, count: opts.requests, concurrency: opts.connections },
      )
      const cpu = done()
      for (const line of formatReport(fuzz, { perRoute: true })) report.print(line)
      if (cpu.server !== null) report.print(`  cpu: server ${(cpu.server / fuzz.seconds).toFixed(2)} cores`)
      report.errors(fuzz.findings.length)
      report.target(
        'no 5xx and no stack trace',
        fuzz.findings.length === 0,
        `${fuzz.findings.length} findings`,
      )
    } finally {
      await gh.stop()
    }
  },
} satisfies Scenario
