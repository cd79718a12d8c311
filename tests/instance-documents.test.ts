import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { eq } from 'drizzle-orm'
import { workspaces } from '../src/features/workspaces/schema'
import { issuerFor, PLATFORM } from '../src/identity'
import { activeWorkspace } from './support/instances'
import { startTestServer, type TestServer } from './support/server'

// Issue 27: once the provider answered an instance's discovery and JWKS in this process, a cold
// instance's documents are made by the bridge (the same text but for the issuer; the instance's public
// keys), without the provider's pipeline. They must be what the provider answers, byte for byte.
let server: TestServer
/** The paths the shared Provider was asked for, in order. */
const asked: string[] = []

beforeAll(async () => {
  server = await startTestServer()
  // Every instance record takes the pool's callback when it loads: wrapped before any loads.
  const pool = server.identity.pool as unknown as {
    callback: (req: IncomingMessage, res: ServerResponse) => void
  }
  const callback = pool.callback
  pool.callback = (req, res) => {
    asked.push(String(req.url))
    callback(req, res)
  }
})
afterAll(() => server.stop())

const DOCUMENTS = ['/.well-known/openid-configuration', '/jwks']
const KEPT = ['content-type', 'cache-control', 'access-control-allow-origin', 'content-security-policy']

/** A document over HTTP, and the provider's own answer of it (in-process, past the bridge's cache). */
async function both(instanceId: string, path: string) {
  const made = await fetch(`${issuerFor(server.core.config, instanceId)}${path}`)
  const own = await server.identity.fetch(instanceId, path)
  return { made, own, madeText: await made.text(), ownText: await own.text() }
}

describe("a cold instance's discovery and JWKS", () => {
  it("are made without the provider once it answered one instance's, and are what it answers", async () => {
    const first = await activeWorkspace(server.core)
    for (const path of DOCUMENTS)
      expect((await fetch(`${issuerFor(server.core.config, first)}${path}`)).status).toBe(200)
    expect(asked).toEqual(DOCUMENTS)

    // Others, of other login policies, and the platform's own instance.
    const others = [
      await activeWorkspace(server.core, 'usr_a', { mfa: 'required' }),
      await activeWorkspace(server.core, 'usr_b'),
      PLATFORM,
    ]
    asked.length = 0
    for (const instanceId of others) {
      for (const path of DOCUMENTS) {
        const { made, own, madeText, ownText } = await both(instanceId, path)
        expect(made.status).toBe(200)
        expect(own.status).toBe(200)
        expect(madeText).toBe(ownText)
        for (const name of KEPT) expect(made.headers.get(name)).toBe(own.headers.get(name))
        expect(made.headers.get('x-request-id')).toBeTruthy()
        expect(made.headers.get('x-content-type-options')).toBe('nosniff')
      }
      const doc = JSON.parse((await both(instanceId, DOCUMENTS[0]!)).madeText) as Record<string, string>
      expect(doc.issuer).toBe(issuerFor(server.core.config, instanceId))
      expect(doc.token_endpoint).toBe(`${issuerFor(server.core.config, instanceId)}/token`)
    }
    // Only `both`'s own in-process requests reached the provider: none of the HTTP ones.
    expect(asked.length).toBe(others.length * (DOCUMENTS.length + 1))
  })

  it('are still refused for an instance that does not serve', async () => {
    const gone = await activeWorkspace(server.core)
    await server.core.db.update(workspaces).set({ state: 'deleting' }).where(eq(workspaces.id, gone))
    for (const path of DOCUMENTS) {
      const res = await fetch(`${issuerFor(server.core.config, gone)}${path}`)
      expect(res.status).toBe(404)
    }
    const unknown = '7f1c6e2a-0000-4000-8000-000000000000'
    expect((await fetch(`${issuerFor(server.core.config, unknown)}${DOCUMENTS[0]}`)).status).toBe(404)
  })
})

describe('the issuer URL itself', () => {
  it('shows a browser the workspace, escaped, with its discovery and JWKS links', async () => {
    const ws = await activeWorkspace(server.core)
    await server.core.db
      .update(workspaces)
      .set({ name: '<img src=x onerror=alert(1)> & Co' })
      .where(eq(workspaces.id, ws))
    const issuer = issuerFor(server.core.config, ws)
    for (const url of [issuer, `${issuer}/`]) {
      const res = await fetch(url, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toStartWith('text/html')
      expect(res.headers.get('content-security-policy')).toContain("default-src 'none'")
      const html = await res.text()
      expect(html).not.toContain('<img src=x')
      expect(html).toContain('&lt;img src=x onerror=alert(1)&gt; &amp; Co')
      expect(html).toContain(`href="${issuer}/.well-known/openid-configuration"`)
      expect(html).toContain(`href="${issuer}/jwks"`)
      expect(html).not.toContain('Not found')
    }
  })

  it('points an API client at the documents, in JSON', async () => {
    const ws = await activeWorkspace(server.core)
    const issuer = issuerFor(server.core.config, ws)
    const res = await fetch(issuer, { headers: { accept: 'application/json' } })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toStartWith('application/json')
    expect(await res.json()).toEqual({
      issuer,
      openid_configuration: `${issuer}/.well-known/openid-configuration`,
      jwks_uri: `${issuer}/jwks`,
    })
  })

  it('is the same not-found as before for an unknown or a workspace that is not active', async () => {
    const gone = await activeWorkspace(server.core)
    await server.core.db.update(workspaces).set({ state: 'deleting' }).where(eq(workspaces.id, gone))
    for (const id of [gone, '7f1c6e2a-0000-4000-8000-00000000abcd']) {
      const page = await fetch(`${issuerFor(server.core.config, id)}/`, { headers: { accept: 'text/html' } })
      expect(page.status).toBe(404)
      expect(await page.text()).toContain('There is no identity instance at this address.')
      const api = await fetch(issuerFor(server.core.config, id), { headers: { accept: 'application/json' } })
      expect(api.status).toBe(404)
      expect(await api.json()).toEqual({ detail: 'Identity instance not found' })
    }
  })
})

describe('with instances by host', () => {
  let byHost: TestServer
  beforeAll(async () => {
    byHost = await startTestServer({ AUTH_URL_TEMPLATE: 'https://{workspace_id}.auth.example.test' })
  })
  afterAll(() => byHost.stop())

  it("makes each instance's discovery with its own host in every URL", async () => {
    const get = (instanceId: string, path: string) =>
      fetch(`${byHost.url}${path}`, { headers: { host: `${instanceId}.auth.example.test` } })
    const first = await activeWorkspace(byHost.core)
    expect((await get(first, DOCUMENTS[0]!)).status).toBe(200)
    for (const instanceId of [await activeWorkspace(byHost.core), await activeWorkspace(byHost.core)]) {
      const made = await get(instanceId, DOCUMENTS[0]!)
      expect(made.status).toBe(200)
      const text = await made.text()
      expect(text).toBe(await (await byHost.identity.fetch(instanceId, DOCUMENTS[0]!)).text())
      const doc = JSON.parse(text) as Record<string, string>
      expect(doc.issuer).toBe(`https://${instanceId}.auth.example.test`)
      expect(doc.jwks_uri).toBe(`https://${instanceId}.auth.example.test/jwks`)
      expect(text).not.toContain(first)
    }
  })

  it('serves the icon its hosted pages link on their own host, whatever the instance', async () => {
    const ws = await activeWorkspace(byHost.core)
    for (const host of [
      `${ws}.auth.example.test`,
      '7f1c6e2a-0000-4000-8000-000000000000.auth.example.test',
    ]) {
      const icon = await fetch(`${byHost.url}/public/favicon.svg`, { headers: { host } })
      expect(icon.status).toBe(200)
      expect(icon.headers.get('content-type')).toBe('image/svg+xml')
      expect(await icon.text()).toStartWith('<svg')
    }
  })
})
