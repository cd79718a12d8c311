// legs: once — a seeded fuzz of request parsing and validation, not of the store's dialect
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { platformClient } from '../src/identity'
import { type FuzzTargets, formatReport, loadRoutes, runFuzz } from './support/fuzz'
import { startTestServer, type TestServer } from './support/server'
import { json, signUpUser, waitForState } from './support/users'

// Reproduce a failure with FUZZ_SEED=<the printed seed> npx bun test tests/fuzz.test.ts
const SEED = Number(process.env.FUZZ_SEED ?? 20_260_808)
const REQUESTS = 2_000

let server: TestServer
let targets: FuzzTargets

beforeAll(async () => {
  server = await startTestServer()
  const owner = await signUpUser(
    server,
    { email: 'fuzz@example.com', password: 'fuzz-password-1', name: 'Fuzz' },
    { bearer: true },
  )
  const other = await signUpUser(server, {
    email: 'other@example.com',
    password: 'other-password-1',
    name: 'O',
  })
  const workspace = async (agent: typeof owner.agent, name: string) => {
    const created = await json(agent, 'POST', '/v1/workspaces', { name })
    return String((await waitForState(agent, created.body.id, 'active')).id)
  }
  const app = async (workspaceId: string) => {
    const created = await json(owner.agent, 'POST', `/v1/workspaces/${workspaceId}/apps`, {
      name: 'Fuzzed app',
      redirect_uris: ['https://rp.example.com/cb'],
    })
    expect(created.status).toBe(201)
    return created.body as { id: string; client_id: string }
  }
  // The fuzzer may rename or delete `fuzzed`; `identity` is only reached through its issuer.
  const fuzzed = await workspace(owner.agent, 'Fuzzed')
  const identity = await workspace(owner.agent, 'Identity')
  const foreign = await workspace(other.agent, 'Not yours')
  const fuzzedApp = await app(fuzzed)
  const identityApp = await app(identity)
  targets = {
    baseUrl: server.baseUrl,
    routes: await loadRoutes(server.baseUrl),
    session: {
      cookieName: 'gh_session',
      cookie: owner.agent.cookie('gh_session')!,
      csrf: owner.csrf,
      bearer: owner.bearer,
    },
    ids: { workspace: [fuzzed], foreignWorkspace: [foreign], app: [fuzzedApp.id] },
    instances: [
      {
        id: 'platform',
        clientId: platformClient(server.core).clientId,
        redirectUri: platformClient(server.core).redirectUri,
        // The owner's identity-plane session too, so the fuzzer gets past "no session" checks.
        cookie: owner.agent.cookieHeader(new URL(`${server.baseUrl}/i/platform/`)),
      },
      { id: identity, clientId: identityApp.client_id, redirectUri: 'https://rp.example.com/cb' },
    ],
  }
}, 60_000)
afterAll(() => server.stop())

describe('the fuzzer', () => {
  it(`finds no 5xx and no stack trace in ${REQUESTS} hostile requests over every route`, async () => {
    expect(targets.routes.length).toBeGreaterThan(20)
    const report = await runFuzz(targets, { seed: SEED, count: REQUESTS })
    for (const line of formatReport(report, { perRoute: !!process.env.FUZZ_ROUTES })) console.log(line)
    expect(report.requests).toBe(REQUESTS)
    // The run reached the routes' logic, not only their guards.
    for (const status of [200, 401, 404, 422]) expect(report.statuses.get(status) ?? 0).toBeGreaterThan(0)
    expect(report.findings).toEqual([])
  }, 60_000)
})
