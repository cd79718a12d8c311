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
