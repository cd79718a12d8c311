// legs: once — pages in Chromium; the services behind them are tested on both stores by the API tests
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Page, Response } from 'playwright-core'
import { sharedBrowser, signUpInBrowser } from './support/browser'
import { startTestServer, type TestServer } from './support/server'
import { eventually } from './support/users'

let server: TestServer

beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.stop())

/** Collects what Chromium reports about a page: console errors (CSP violations land there) and script errors. */
function watch(page: Page) {
  const problems: string[] = []
  page.on('console', (m) => {
    const text = m.text()
    // The 400, 404 and 422 answers this walk provokes on purpose are logged too (by Chromium and htmx).
    if (/^Failed to load resource: .* (400|404|422) |^Response Status Error Code (404|422) /.test(text))
      return
    if (m.type() === 'error' || text.includes('Content Security Policy')) problems.push(text)
  })
  page.on('pageerror', (e) => problems.push(e.message))
  return problems
}

const policy = (res: Response | null) => res?.headers()['content-security-policy'] ?? ''

describe('every page under its Content-Security-Policy in headless Chromium', () => {
  it('works with no violation: sign-up, dashboard pages, htmx, copy buttons, device flow, logout', async () => {
    const context = await (await sharedBrowser()).newContext()
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.baseUrl })
    const page = await context.newPage()
    const problems = watch(page)

    // The watcher sees a violation: an inline script injected into a dashboard page is refused.
    const signedOut = await page.goto(`${server.baseUrl}/app/signed-out`)
    expect(policy(signedOut)).toContain("script-src 'self'")
    await page.evaluate(() => {
      const s = document.createElement('script')
      s.textContent = 'window.injected = true'
      document.head.append(s)
    })
    await eventually('the refused inline script to be reported', async () =>
      problems.some((p) => p.includes('Content Security Policy')) ? true : undefined,
    )
    expect(await page.evaluate(() => (window as unknown as { injected?: boolean }).injected)).toBeUndefined()
    problems.length = 0

    // Hosted sign-up (identity plane) to the dashboard.
    const login = await page.goto(`${server.baseUrl}/app/`)
    expect(policy(login)).toContain("frame-ancestors 'none'")
    await signUpInBrowser(page, {
      name: 'Grace Hopper',
      email: 'grace@example.com',
      password: 'cobol-forever-1959',
    })
    await page.waitForURL(`${server.baseUrl}/app/`)

    // htmx: a form posted with hx-post, a 422 swapped in, a redirect.
    await page.goto(`${server.baseUrl}/app/workspaces/new`)
    await page.getByLabel('Workspace name').fill('   ')
    await page.getByRole('button', { name: 'Create workspace' }).click()
    await page.getByText('Enter a name.').waitFor()
    await page.getByLabel('Workspace name').fill('Compilers')
    await page.getByRole('button', { name: 'Create workspace' }).click()
    await page.waitForURL(/\/app\/workspaces\/[0-9a-f-]{36}$/)
    const workspaceUrl = page.url()
    // Polling (hx-trigger="every 3s") turns the status active without a reload.
    await page.locator('#ws-status .badge.active').waitFor({ timeout: 15_000 })

    await page.goto(`${workspaceUrl}/settings`)
    await page.getByRole('heading', { name: 'Settings' }).waitFor()
    await page.goto(`${server.baseUrl}/app/workspaces`)
    await page.locator('a.card', { hasText: 'Compilers' }).waitFor()

    // An app with a client secret: the copy buttons work from public/app.js.
    await page.goto(`${workspaceUrl}/apps`)
    await page.getByLabel('Name').fill('Flow-Matic')
    await page.getByLabel('Redirect URIs', { exact: true }).fill('https://flow.example.com/cb')
    await page.getByRole('button', { name: 'Create app' }).click()
    await page.getByRole('heading', { name: 'Flow-Matic is ready' }).waitFor()
    const secret = (await page.locator('code[title="Client secret"]').textContent())!
    const copy = page
      .locator('.secret', { has: page.locator('code[title="Client secret"]') })
      .getByRole('button')
    await copy.click()
    await page.getByRole('button', { name: 'Copied' }).waitFor()
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret)
    // hx-delete with hx-confirm.
    page.once('dialog', (d) => d.accept())
    await page.getByRole('button', { name: 'Delete Flow-Matic' }).click()
    await page.locator('#app-rows tr', { hasText: 'Flow-Matic' }).waitFor({ state: 'detached' })

    // A dashboard error page.
    const missing = await page.goto(`${server.baseUrl}/app/workspaces/00000000-0000-4000-8000-000000000000`)
    expect(missing?.status()).toBe(404)
    await page.getByRole('heading', { name: 'Not found' }).waitFor()

    // The device flow's pages, including oidc-provider's self-submitting form behind the complete link.
    const started = (await (
      await fetch(`${server.baseUrl}/v1/auth/device/start`, { method: 'POST' })
    ).json()) as {
      verification_uri_complete: string
    }
    await page.goto(started.verification_uri_complete)
    await page.getByRole('heading', { name: 'Confirm the device' }).waitFor()
    await page.getByRole('button', { name: 'Allow' }).click()
    await page.getByRole('heading', { name: 'Device connected' }).waitFor()
    const input = await page.goto(`${server.baseUrl}/i/platform/device`)
    expect(policy(input)).toContain("frame-ancestors 'none'")
    await page.getByRole('heading', { name: 'Connect a device' }).waitFor()
    await page.goto(`${server.baseUrl}/i/platform/forgot-password`)
    await page.getByRole('heading', { name: 'Reset your password' }).waitFor()
    await page.goto(`${server.baseUrl}/i/platform/verify-email?token=unknown`)
    await page.getByRole('heading', { name: 'Link expired' }).waitFor()

    // Sign out from the dashboard: the logout page confirms itself with its inline script (by hash).
    await page.goto(`${server.baseUrl}/app/`)
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForURL(`${server.baseUrl}/app/signed-out`)
    await page.getByRole('heading', { name: 'You are signed out' }).waitFor()
    // Signed out for real: the dashboard sends the browser to the sign-in page again.
    await page.goto(`${server.baseUrl}/app/`)
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()

    expect(problems).toEqual([])
    await context.close()
  }, 60_000)
})
