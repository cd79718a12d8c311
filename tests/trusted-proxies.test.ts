import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { rmSync } from 'node:fs'
import { tempDir } from './support/core'
import { startTestServer, type TestServer } from './support/server'
import { signInForm } from './support/sign-in'
import type { Json } from './support/users'

// The test client connects from 127.0.0.1: here that address is a trusted reverse proxy.
let server: TestServer
const dataDir = tempDir()
beforeAll(async () => {
  server = await startTestServer({ TRUSTED_PROXIES: '127.0.0.1/32' }, dataDir)
})
afterAll(async () => {
  await server.stop()
  rmSync(dataDir, { recursive: true, force: true })
})

const via = (forwardedFor: string) => ({ 'x-forwarded-for': forwardedFor })

describe('behind a trusted reverse proxy', () => {
  it('locks the forwarded client that failed 30 times and not another one behind the same proxy', async () => {
    const { ws, post } = await signInForm(server)
    // A different account each time: only the per-address rule can lock.
    const spray = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        post(`spray-${i}@example.com`, 'sprayed-password', via('198.51.100.7')),
      ),
    )
    expect(spray.map((r) => r.status)).toEqual(new Array(30).fill(401))

    const again = await post('spray-30@example.com', 'sprayed-password', via('198.51.100.7'))
    expect(again.status).toBe(429)
    expect(await again.text()).toContain('Too many failed sign-in attempts. Try again in 15 minutes.')
    // What the client writes left of the proxy's own entry is not believed.
    const spoofed = await post('spray-31@example.com', 'sprayed-password', via('198.51.100.8, 198.51.100.7'))
    expect(spoofed.status).toBe(429)

    const neighbour = await post('spray-32@example.com', 'sprayed-password', via('198.51.100.8'))
    expect(neighbour.status).toBe(401)
    const keys = await server.core.store.query<{ key: string }>(
      'SELECT key FROM login_throttle WHERE key LIKE $1 ORDER BY key',
      [`ip:${ws}:%`],
    )
    expect(keys.map((k) => k.key)).toEqual([`ip:${ws}:198.51.100.7`, `ip:${ws}:198.51.100.8`])
  })

  it('keys a request without X-Forwarded-For by the proxy itself', async () => {
    const { ws, post } = await signInForm(server)
    expect((await post('nobody@example.com', 'wrong-password')).status).toBe(401)
    const keys = await server.core.store.query<{ key: string }>(
      'SELECT key FROM login_throttle WHERE key LIKE $1',
      [`ip:${ws}:%`],
    )
    expect(keys.map((k) => k.key)).toEqual([`ip:${ws}:127.0.0.1`])
  })

  it('hands the forwarded client address to the identity plane when the control plane starts a device flow', async () => {
    const res = await fetch(`${server.baseUrl}/v1/auth/device/start`, {
      method: 'POST',
      headers: via('203.0.113.50, 198.51.100.9'),
    })
    expect(res.status).toBe(200)
    const rows = await server.core.store.query<{ payload: string }>(
      "SELECT payload FROM oidc_payloads WHERE instance_id = 'platform' AND model = 'DeviceCode'",
    )
    const ips = rows.map((r) => (JSON.parse(r.payload) as { deviceInfo?: { ip?: string } }).deviceInfo?.ip)
    expect(ips).toEqual(['198.51.100.9'])
  })

  it("keeps the proxy's X-Request-Id on both planes, and replaces one that is not sane", async () => {
    const ours = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
    // The control plane, the identity plane past its cache (a first JWKS) and from it (again).
    const paths = ['/healthz', '/i/platform/jwks', '/i/platform/jwks']
    for (const [i, path] of paths.entries()) {
      const sent = `edge-${i}.abc:1`
      const kept = await fetch(`${server.baseUrl}${path}`, { headers: { 'x-request-id': sent } })
      expect(kept.status).toBe(200)
      expect(kept.headers.get('x-request-id')).toBe(sent)
      const replaced = await fetch(`${server.baseUrl}${path}`, {
        headers: { 'x-request-id': 'bad id <script>' },
      })
      expect(replaced.headers.get('x-request-id')).toMatch(ours)
    }
    const logged = server.logLines.filter(
      (l) => l.msg === 'request' && String(l.request_id).startsWith('edge-'),
    )
    expect(logged.map((l) => [l.request_id, l.path])).toEqual(
      paths.map((path, i) => [`edge-${i}.abc:1`, path]),
    )
  })
})

describe('behind a proxy missing from TRUSTED_PROXIES', () => {
  // Issue 56: without TRUSTED_PROXIES the proxy (the test client at 127.0.0.1) is every client's
  // address, and all of them share its per-address limits. The node says so, once.
  let untrusted: TestServer
  const untrustedDir = tempDir()
  beforeAll(async () => {
    untrusted = await startTestServer({}, untrustedDir)
  })
  afterAll(async () => {
    await untrusted.stop()
    rmSync(untrustedDir, { recursive: true, force: true })
  })
  const healthz = async (s: TestServer) => (await fetch(`${s.baseUrl}/healthz`)).json() as Promise<Json>
  const warnLines = (s: TestServer) => s.logLines.filter((l) => l.level === 'warn')

  it('warns once in the log and in /healthz, naming the peer and the fix', async () => {
    expect(await healthz(untrusted)).not.toHaveProperty('warnings')
    for (const client of ['198.51.100.7', '198.51.100.8', '198.51.100.7']) {
      const res = await fetch(`${untrusted.baseUrl}/v1/auth/device/start`, {
        method: 'POST',
        headers: via(client),
      })
      expect(res.status).toBe(200)
    }
    const warning =
      'Requests from 127.0.0.1 carry X-Forwarded-For, but 127.0.0.1 is not in TRUSTED_PROXIES: every client ' +
      'behind it shares its address, in the per-address rate limits and the audit log. If 127.0.0.1 is your ' +
      'reverse proxy, set TRUSTED_PROXIES=127.0.0.1.'
    expect(warnLines(untrusted).map((l) => [l.msg, l.peer])).toEqual([[warning, '127.0.0.1']])
    const health = await healthz(untrusted)
    expect(health.warnings).toEqual([warning])
    // SPEC: the values of /healthz are strings; `warnings` (issue 56) is the one list, and only when there is one.
    const { warnings: _, ...rest } = health
    for (const v of Object.values(rest)) expect(typeof v).toBe('string')
    expect(health.status).toBe('ok')
  })

  it('says nothing of a trusted proxy', async () => {
    const res = await fetch(`${server.baseUrl}/v1/auth/device/start`, {
      method: 'POST',
      headers: via('198.51.100.9'),
    })
    expect(res.status).toBe(200)
    expect(warnLines(server)).toEqual([])
    expect(await healthz(server)).not.toHaveProperty('warnings')
  })
})
