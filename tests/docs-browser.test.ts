// legs: once — pages in Chromium; the services behind them are tested on both stores by the API tests
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { sharedBrowser } from './support/browser'
import { startTestServer, type TestServer } from './support/server'

const DOCS_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'"
const SCALAR = join(import.meta.dir, '../node_modules/@scalar/api-reference/dist/browser/standalone.js')

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.stop())

type Requirement = Record<string, string[]>
interface Operation {
  tags?: string[]
  security?: Requirement[]
}
interface ApiDocument {
  info: { version: string; description: string }
  tags: { name: string; description: string }[]
  components: { securitySchemes: Record<string, Record<string, string>> }
  paths: Record<string, Record<string, Operation>>
}

describe('/openapi.json', () => {
  let doc: ApiDocument
  beforeAll(async () => {
    doc = (await (await fetch(`${server.baseUrl}/openapi.json`)).json()) as ApiDocument
  })
  const op = (path: string, method: string) => doc.paths[path]![method]!

  it('declares bearer tokens and the session cookie with its CSRF header', () => {
    expect(doc.info.version).toBe('0.1.0')
    expect(doc.components.securitySchemes).toEqual({
      bearer: expect.objectContaining({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }),
      session: expect.objectContaining({ type: 'apiKey', in: 'cookie', name: 'gh_session' }),
      csrf: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-CSRF-Token' }),
    })
  })

  it("gives each route the security its guard asks: a workspace's scope, CSRF on writes, none when open", () => {
    expect(op('/v1/workspaces/{workspace_id}/apps/', 'get').security).toEqual([
      { bearer: ['workspace:read'] },
      { session: [] },
    ])
    expect(op('/v1/workspaces/{workspace_id}/apps/', 'post').security).toEqual([
      { bearer: ['workspace:write'] },
      { session: [], csrf: [] },
    ])
    expect(op('/v1/workspaces/{workspace_id}/machine-keys/', 'post').security![0]).toEqual({
      bearer: ['workspace:admin'],
    })
    // A tenant key reaches its tenant's routes too.
    expect(op('/v1/workspaces/{workspace_id}/tenants/{tenant_id}', 'get').security).toEqual([
      { bearer: ['workspace:read'] },
      { bearer: ['tenant:{slug}:read'] },
      { session: [] },
    ])
    expect(op('/v1/auth/me', 'get').security).toEqual([{ bearer: [] }, { session: [] }])
    for (const [path, method] of [
      ['/v1/auth/device/start', 'post'],
      ['/v1/auth/login', 'get'],
      ['/v1/auth/token', 'post'],
      ['/v1/webhooks/payments', 'post'],
      ['/healthz', 'get'],
    ] as const)
      expect({ path, security: op(path, method).security }).toEqual({ path, security: [] })
  })

  it('opens with how to authenticate, the errors and the rate limits', () => {
    const { description } = doc.info
    expect(description).toMatch(/^## Authentication$/m)
    expect(description).toContain('Authorization: Bearer')
    expect(description).toContain('X-CSRF-Token')
    expect(description).toMatch(/^## Errors$/m)
    expect(description).toContain('{"detail"')
    expect(description).toMatch(/^## Rate limits$/m)
    expect(description).toContain('Retry-After')
  })

  it('orders its tags as a reader would: signing in and workspaces first, the dashboard pages last', () => {
    const names = doc.tags.map((t) => t.name)
    expect(names.slice(0, 3)).toEqual(['auth', 'workspaces', 'members'])
    expect(names.at(-1)).toBe('views')
    for (const t of doc.tags) expect(t.description.length).toBeGreaterThan(0)
    const used = new Set(
      Object.values(doc.paths).flatMap((ops) => Object.values(ops).flatMap((o) => o.tags ?? [])),
    )
    expect([...used].filter((t) => !names.includes(t))).toEqual([])
  })
})

describe('/docs', () => {
  it('is a small page that runs no inline script and loads the reference from this server', async () => {
    const res = await fetch(`${server.baseUrl}/docs`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-security-policy')).toBe(DOCS_CSP)
    expect(res.headers.get('content-type')).toStartWith('text/html')
    const html = await res.text()
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)]
    for (const [, , body] of scripts) expect(body!.trim()).toBe('')
    const srcs = scripts.map(([, attrs]) => /\bsrc="([^"]+)"/.exec(attrs!)?.[1]).filter(Boolean)
    expect(srcs).toEqual(['/docs/setup.js', '/docs/scalar.js?v=1.72.1'])
    expect(scripts.length).toBe(3)
    expect(html).not.toMatch(/https?:\/\//)
  })

  it('serves the pinned Scalar bundle itself, cached for a long time', async () => {
    const res = await fetch(`${server.baseUrl}/docs/scalar.js`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toStartWith('text/javascript')
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    expect(Buffer.from(await res.arrayBuffer()).equals(readFileSync(SCALAR))).toBe(true)
    const zipped = await fetch(`${server.baseUrl}/docs/scalar.js`, {
      headers: { 'accept-encoding': 'gzip' },
      decompress: false,
    } as RequestInit)
    expect(zipped.headers.get('content-encoding')).toBe('gzip')
    const body = new Uint8Array(await zipped.arrayBuffer())
    expect(body.byteLength).toBeLessThan(readFileSync(SCALAR).byteLength / 2)
    expect(Buffer.from(Bun.gunzipSync(body)).equals(readFileSync(SCALAR))).toBe(true)
  })

  it('renders the Gatehouse API in Chromium with no CSP violation and no request leaving this server', async () => {
    const context = await (await sharedBrowser()).newContext()
    const page = await context.newPage()
    const requests: string[] = []
    const problems: string[] = []
    page.on('request', (r) => requests.push(r.url()))
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`))
    page.on('console', (m) => {
      if (/content security policy|refused to/i.test(m.text())) problems.push(`console: ${m.text()}`)
    })
    // Offline either way: whatever would leave is recorded above, then refused here.
    await page.route('**/*', (route) =>
      new URL(route.request().url()).origin === server.baseUrl ? route.continue() : route.abort(),
    )
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) => {
        ;(window as unknown as { violations: string[] }).violations ??= []
        ;(window as unknown as { violations: string[] }).violations.push(
          `${e.violatedDirective} ${e.blockedURI}`,
        )
      })
    })

    await page.goto(`${server.baseUrl}/docs`)
    await page.locator('h1', { hasText: 'Gatehouse API' }).first().waitFor({ timeout: 20_000 })
    await page.getByText('/v1/workspaces').first().waitFor()
    expect(await page.getByText('Generate MCP').count()).toBe(0)
    await page.waitForLoadState('load')

    const violations = await page.evaluate(
      () => (window as unknown as { violations?: string[] }).violations ?? [],
    )
    expect(violations).toEqual([])
    expect(problems).toEqual([])
    expect(requests.filter((u) => !u.startsWith(`${server.baseUrl}/`))).toEqual([])
    expect(requests).toContain(`${server.baseUrl}/openapi.json`)
    await context.close()
  }, 60_000)
})
