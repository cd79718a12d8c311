// legs: once — pages in Chromium; the services behind them are tested on both stores by the API tests
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { signedInPage } from './support/browser'
import { checkAccessibility, checkNarrowViewport, collectConsoleErrors } from './support/page-checks'
import { startTestServer, type TestServer } from './support/server'
import { type PlatformUser, signUpUser, workspaceFor } from './support/users'

// Issue 57 item 5 ("One navigation") in headless Chromium: every workspace page draws the same
// sidebar, from the features' nav entries, in order, with the page's own entry current; at 375 px it
// is a tab bar that scrolls by itself, not the page. And the leftover of item 6: creating a second
// app on the apps page raised htmx:oobErrorNoTarget (the empty-state row it deletes was gone).

let server: TestServer
let owner: PlatformUser
let ws: { id: string }
const person = { email: 'nav@example.com', password: 'analytical-engine-1', name: 'Nav' }
const ENTRIES = [
  'Overview',
  'Apps',
  'Users',
  'Tenants',
  'Members',
  'Machine keys',
  'Webhooks',
  'Audit log',
  'Settings',
  'Billing',
  'API docs',
]

beforeAll(async () => {
  server = await startTestServer()
  owner = await signUpUser(server, person)
  ws = await workspaceFor(owner, 'Harbour')
})
afterAll(() => server.stop())

describe('the workspace sidebar', () => {
  it('is on every workspace page, in order, with the current entry marked, and fits 375 px', async () => {
    const { context, page } = await signedInPage(server.baseUrl, person)
    const problems = await collectConsoleErrors(page)
    const pages: [string, string][] = [
      ['', 'Overview'],
      ['/apps', 'Apps'],
      ['/users', 'Users'],
      ['/tenants', 'Tenants'],
      ['/settings/members', 'Members'],
      ['/settings/machine-keys', 'Machine keys'],
      ['/settings/webhooks', 'Webhooks'],
      ['/settings/audit-log', 'Audit log'],
      ['/settings', 'Settings'],
      ['/settings/login-policy', 'Settings'],
      ['/settings/branding', 'Settings'],
      ['/billing', 'Billing'],
    ]
    for (const [path, current] of pages) {
      await page.setViewportSize({ width: 1280, height: 800 })
      await page.goto(`${server.baseUrl}/app/workspaces/${ws.id}${path}`)
      const sidebar = page.getByRole('navigation', { name: 'Workspace' })
      expect(await sidebar.getByRole('link').allTextContents()).toEqual(ENTRIES)
      expect(await sidebar.locator('[aria-current="page"]').allTextContents()).toEqual([current])
      expect(await checkAccessibility(page)).toEqual([])
      expect(await checkNarrowViewport(page)).toEqual([])
    }
    const sidebar = page.getByRole('navigation', { name: 'Workspace' })
    expect(await sidebar.getByRole('link', { name: 'API docs' }).getAttribute('href')).toBe('/docs')
    expect(await sidebar.getByRole('link', { name: 'Overview' }).getAttribute('href')).toBe(
      `/app/workspaces/${ws.id}`,
    )
    expect(await problems()).toEqual([])
    await context.close()
  })
})

describe('the apps page', () => {
  it('creates two apps in a row without an htmx error, and the overview ticks "Create an app"', async () => {
    const { context, page } = await signedInPage(server.baseUrl, person)
    const problems = await collectConsoleErrors(page)
    const step = page.locator('#getting-started li', { hasText: 'Create an app' })
    await page.goto(`${server.baseUrl}/app/workspaces/${ws.id}`)
    expect(await step.textContent()).toContain('(to do)')
    expect(await step.getByRole('link').getAttribute('href')).toBe(`/app/workspaces/${ws.id}/apps`)
    await page.goto(`${server.baseUrl}/app/workspaces/${ws.id}/apps`)
    for (const name of ['First', 'Second']) {
      await page.getByLabel('Name', { exact: true }).fill(name)
      await page.getByLabel('Redirect URIs', { exact: true }).fill('https://rp.example.com/cb')
      await page.getByRole('button', { name: 'Create app' }).click()
      await page.locator('#app-rows').getByRole('link', { name }).waitFor()
      // Done reloads the list: the second app is created on a page whose table already has a row.
      await page.getByRole('link', { name: 'Done' }).click()
      await page.getByRole('button', { name: 'Create app' }).waitFor()
    }
    expect(await page.locator('#app-rows tr').count()).toBe(2)
    expect(await page.getByText('No apps yet').isVisible()).toBe(false)
    await page.goto(`${server.baseUrl}/app/workspaces/${ws.id}`)
    expect(await step.textContent()).toContain('(done)')
    // The test server keeps mail in the dev outbox: that is not mail set up.
    for (const todo of ['Set up mail', 'Brand the', 'Invite a user']) {
      expect(await page.locator('#getting-started li', { hasText: todo }).textContent()).toContain('(to do)')
    }
    expect(await checkAccessibility(page)).toEqual([])
    expect(await problems()).toEqual([])
    await context.close()
  })
})

describe('the settings index', () => {
  it('lists the settings pages once each, with no "coming soon" row', async () => {
    const res = await owner.agent.request(`/app/workspaces/${ws.id}/settings`)
    expect(res.status).toBe(200)
    const body = await res.text()
    expect(body).not.toContain('coming soon')
    const index = body.slice(body.indexOf('<h1>Settings</h1>'))
    const links = [...index.matchAll(/<li><a href="([^"]+)">([^<]+)<\/a><\/li>/g)].map((m) => [m[1], m[2]])
    const base = `/app/workspaces/${ws.id}/settings`
    expect(links).toEqual([
      [`${base}/login-policy`, 'Login policy'],
      [`${base}/idps`, 'Identity providers'],
      [`${base}/smtp`, 'SMTP'],
      [`${base}/branding`, 'Branding'],
    ])
  })
})
