// legs: once — pages in Chromium; the services behind them are tested on both stores by the API tests
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { holdProvisioning, PROVISIONING_CONTROL } from './fixtures/provisioning-control'
import { sharedBrowser, signUpInBrowser } from './support/browser'
import { startTestServer, type TestServer } from './support/server'
import { json, signUpUser, waitForState } from './support/users'

let server: TestServer

beforeAll(async () => {
  // In-process jobs: the test holds a workspace's provisioning to watch the status fragment.
  server = await startTestServer({}, undefined, {
    handlerModules: [PROVISIONING_CONTROL],
    inProcessJobs: true,
  })
})
afterAll(() => server.stop())

describe('the dashboard in headless Chromium', () => {
  it('walks a new user from sign-up to a workspace and a spa app created, revealed once and deleted', async () => {
    const context = await (await sharedBrowser()).newContext()
    const page = await context.newPage()
    const errors: string[] = []
    page.on('pageerror', (e) => errors.push(e.message))

    await page.goto(`${server.baseUrl}/app/`)
    // Signed out: the dashboard sends the browser to the login, keeping where it was going.
    await signUpInBrowser(page, {
      name: 'Margaret Hamilton',
      email: 'margaret@example.com',
      password: 'apollo-guidance-11',
    })
    await page.waitForURL(`${server.baseUrl}/app/`)
    await page.goto(`${server.baseUrl}/v1/auth/login`)
    await page.waitForURL(`${server.baseUrl}/app/workspaces/new`)

    // Validation shows inline, not as a raw error.
    await page.getByLabel('Workspace name').fill('   ')
    await page.getByRole('button', { name: 'Create workspace' }).click()
    await page.getByText('Enter a name.').waitFor()

    const provisioning = holdProvisioning('Apollo')
    await page.getByLabel('Workspace name').fill('Apollo')
    await page.getByRole('button', { name: 'Create workspace' }).click()
    await page.waitForURL(/\/app\/workspaces\/[0-9a-f-]{36}$/)
    await page.evaluate(() => {
      ;(window as unknown as { marker: number }).marker = 42
    })
    await expect(page.locator('#ws-status .badge').textContent()).resolves.toContain('Provisioning')
    expect(await page.locator('#ws-status').getAttribute('hx-trigger')).toBe('every 3s')
    provisioning.release()
    await page.locator('#ws-status .badge.active').waitFor({ timeout: 15_000 })
    // Same document: the fragment turned active without a reload, and polling stopped.
    expect(await page.evaluate(() => (window as unknown as { marker: number }).marker)).toBe(42)
    expect(await page.locator('#ws-status').getAttribute('hx-trigger')).toBeNull()

    await page.getByRole('link', { name: 'Create an app' }).click()
    await page.getByText('No apps yet').waitFor()
    await page.getByLabel('Name').fill('Mission Control')
    await page.getByLabel('Type').selectOption('spa')
    await page.getByLabel('Redirect URIs', { exact: true }).fill('http://localhost:5173/callback')
    await page.getByRole('button', { name: 'Create app' }).click()
    await page.getByText('Line 1: HTTPS is required').waitFor()
    await page.getByLabel('Development mode').check()
    await page.getByRole('button', { name: 'Create app' }).click()

    await page.getByRole('heading', { name: 'Mission Control is ready' }).waitFor()
    const clientId = await page.locator('code[title="Client ID"]').textContent()
    expect(clientId?.length).toBeGreaterThan(10)
    await expect(page.locator('code[title="Client secret"]').count()).resolves.toBe(0)
    const row = page.locator('#app-rows tr', { hasText: 'Mission Control' })
    await expect(row.count()).resolves.toBe(1)
    expect(await page.getByText('No apps yet').isVisible()).toBe(false)

    // Shown once: a reload lists the app but no credentials panel.
    await page.reload()
    await expect(page.getByRole('heading', { name: 'Mission Control is ready' }).count()).resolves.toBe(0)
    page.once('dialog', (d) => d.accept())
    await page.getByRole('button', { name: 'Delete Mission Control' }).click()
    await page.locator('#app-rows tr', { hasText: 'Mission Control' }).waitFor({ state: 'detached' })
    // The last app gone, the table says it has none, without a reload.
    expect(await page.getByText('No apps yet').isVisible()).toBe(true)

    const list = await page.evaluate(async (path) => (await fetch(path)).status, `/app/workspaces`)
    expect(list).toBe(200)
    expect(errors).toEqual([])
    await context.close()
  }, 60_000)

  it('shows a failed workspace with its reason and a retry button that brings it back', async () => {
    const user = {
      email: 'katherine@example.com',
      password: 'orbital-mechanics-6',
      name: 'Katherine Johnson',
    }
    const owner = await signUpUser(server, user)
    const created = await json(owner.agent, 'POST', '/v1/workspaces', { name: 'Gemini' })
    await waitForState(owner.agent, created.body.id, 'active')
    const context = await (await sharedBrowser()).newContext()
    const page = await context.newPage()
    await page.goto(`${server.baseUrl}/v1/auth/login`)
    await page.getByLabel('Email').fill(user.email)
    await page.getByLabel('Password').fill(user.password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(`${server.baseUrl}/app/`)
    const card = page.locator('a.card', { hasText: 'Gemini' })
    const href = (await card.getAttribute('href'))!
    const id = href.split('/').pop()!
    await server.core.store.exec(
      "UPDATE workspaces SET state = 'provisioning_failed', provisioning_error = 'Could not create the signing keys.' WHERE id = $1",
      [id],
    )
    const retried = holdProvisioning('Gemini')
    await page.goto(`${server.baseUrl}${href}`)
    await page.getByText('Could not create the signing keys.').waitFor()
    await page.getByRole('button', { name: 'Retry provisioning' }).click()
    // The retry answers the fragment in provisioning with polling on.
    await page.locator('#ws-status .badge.provisioning').waitFor()
    expect(await page.locator('#ws-status').getAttribute('hx-trigger')).toBe('every 3s')
    retried.release()
    await page.locator('#ws-status .badge.active').waitFor({ timeout: 15_000 })
    await context.close()
  }, 60_000)
})
