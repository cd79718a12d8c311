import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createApp, createFetch } from '../src/app'
import { features } from '../src/features'
import { composeExtensions, instanceEndpoints, issuerFor, startIdentityPlane } from '../src/identity'
import { testCore } from './support/core'
import { activeWorkspace } from './support/instances'
import { freePort } from './support/server'

// DESIGN "Data plane fairness": a quarter of an instance's burst is kept for a browser's hosted
// pages, which token calls cannot take. A feature's endpoint under an instance (its identity
// extension's `endpoints`) answers JSON, as the provider's endpoints do, so it counts as one of
// them: 250 calls at once get 150 answers (the burst of 200 less the pages' 50), not 200. The
// product lends no endpoint yet, so the server here is composed as `startServer` composes it, with
// one test feature beside the product's; its clock stands still while the burst is sent.
let stop: () => Promise<void>
let issuer: string

/** Ten clients, each sent a tenth of the burst: none of them reaches its own share (a quarter). */
const CLIENTS = Array.from({ length: 10 }, (_, i) => `198.51.100.${i + 1}`)

beforeAll(async () => {
  const port = await freePort()
  const core = await testCore({
    BASE_URL: `http://127.0.0.1:${port}`,
    RATE_LIMIT_DATA_PLANE_RPS: '50',
    RATE_LIMIT_DATA_PLANE_BURST: '200',
    // The test client is a trusted proxy: `X-Forwarded-For` names each request's client.
    TRUSTED_PROXIES: '127.0.0.1/32',
  })
  const ping = instanceEndpoints('test-ping').get('/ping', ({ instance }) => ({ issuer: instance.issuer }))
  const extensions = composeExtensions(core, [
    ...features,
    { name: 'ping', identity: () => ({ endpoints: [ping] }) },
  ])
  const identity = await startIdentityPlane(core, extensions)
  const app = createApp(core, { identity })
  const server = Bun.serve({ hostname: '127.0.0.1', port, fetch: createFetch(core, app, { identity }) })
  issuer = issuerFor(core.config, await activeWorkspace(core))
  stop = async () => {
    await server.stop(true)
    core.instances.close()
    await core.store.close()
  }
})
afterAll(() => stop())

describe("a feature's endpoint under an instance", () => {
  it('counts as a JSON request: it cannot take the burst the hosted pages keep', async () => {
    const first = await fetch(`${issuer}/ping`, { headers: { 'x-forwarded-for': CLIENTS[0]! } })
    expect(first.status).toBe(200)
    expect(await first.json()).toEqual({ issuer })
    const answers = await Promise.all(
      Array.from({ length: 249 }, (_, i) =>
        fetch(`${issuer}/ping`, { headers: { 'x-forwarded-for': CLIENTS[(i + 1) % CLIENTS.length]! } }),
      ),
    )
    const statuses = [first.status, ...answers.map((r) => r.status)]
    expect(statuses.filter((s) => s === 200).length).toBe(150)
    expect(statuses.filter((s) => s === 429).length).toBe(100)
  })
})
