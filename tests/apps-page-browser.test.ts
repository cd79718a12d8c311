// legs: once — pages in Chromium; the services behind them are tested on both stores by the API tests
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Page } from 'playwright-core'
import { SECRET_PLACEHOLDER } from '../src/features/apps/quickstarts'
import { acceptConfirmations, signedInPage } from './support/browser'
import { clientCredentials } from './support/instances'
import { startTestServer, type TestServer } from './support/server'
import { json, type PlatformUser, signUpUser, workspaceFor } from './support/users'

// Issue 57 item 3: an app's page in headless Chromium. Reached from the apps list, it edits the app
// (inline errors on a refused URI, the heading and quickstarts following a rename), rotates the
// secret with a grace (the new secret revealed once, with its .env block and a Copy button, and gone
// on reload) and deletes the app, with no console error on the way.

let server: TestServer
let owner: PlatformUser
let ws: { id: string; auth_url: string }
const person = { email: 'ada@example.com', password: 'analytical-engine-1', name: 'Ada' }
const RP = 'https://rp.example.com'

beforeAll(async () => {
  server = await startTestServer()
  owner = await signUpUser(server, person)
  ws = await workspaceFor(owner, 'Engines')
})
afterAll(() => server.stop())

/**
 * Console errors and script errors of a page; the 422 this walk provokes on purpose is no problem,
 * nor is the favicon Chromium asks for on its own (there is none: 404).
 */
function watch(page: Page): string[] {
  const problems: string[] = []
  page.on('console', (m) => {
    if (/^Failed to load resource: .* 422 |^Response Status Error Code 422 /.test(m.text())) return
    if (new URL(m.location().url || 'about:blank').pathname === '/favicon.ico') return
    if (m.type() === 'error') problems.push(`${m.text()} (${m.location().url})`)
  })
  page.on('pageerror', (e) => problems.push(e.message))
  return problems
}

describe("an app's page", () => {
  it('edits the app, rotates its secret with a one-time reveal, and deletes it', async () => {
    const created = await json(owner.agent, 'POST', `/v1/workspaces/${ws.id}/apps`, {
      name: 'Difference',
      redirect_uris: [`${RP}/cb`],
    })
    expect(created.status).toBe(201)
    const app = created.body
    const { context, page, errors } = await signedInPage(server.baseUrl, person)
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.baseUrl })
    const problems = watch(page)
    const asked: string[] = []
    acceptConfirmations(page, asked)

    await page.goto(`${server.baseUrl}/app/workspaces/${ws.id}/apps`)
    await page.getByRole('link', { name: 'Difference' }).click()
    await page.waitForURL(`${server.baseUrl}/app/workspaces/${ws.id}/apps/${app.id}`)
    await page.getByRole('heading', { name: 'Difference', level: 1 }).waitFor()
    expect(await page.locator('code[title="Client ID"]').textContent()).toBe(app.client_id)
    const express = (await page.locator('#qs-express-0').textContent())!
    expect(express).toContain(JSON.stringify(ws.auth_url))
    expect(express).toContain(JSON.stringify(app.client_id))
    expect(await page.locator('#qs-env-0').textContent()).toContain(
      `OIDC_CLIENT_SECRET=${SECRET_PLACEHOLDER}`,
    )

    // A refused URI is said next to its field, and nothing changes.
    await page.getByLabel('Redirect URIs', { exact: true }).fill('http://example.com/cb')
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page.getByText('Line 1: HTTPS is required').waitFor()
    expect(
      (await json(owner.agent, 'GET', `/v1/workspaces/${ws.id}/apps/${app.id}`)).body.redirect_uris,
    ).toEqual([`${RP}/cb`])

    await page.getByLabel('Name', { exact: true }).fill('Analytical')
    await page.getByLabel('Redirect URIs', { exact: true }).fill(`${RP}/new\nhttp://localhost:3000/cb`)
    await page.getByLabel('Development mode').check()
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page.getByText('Saved.').waitFor()
    await page.getByRole('heading', { name: 'Analytical', level: 1 }).waitFor()
    expect(await page.locator('#qs-env-0').textContent()).toContain(`OIDC_REDIRECT_URI=${RP}/new`)
    expect((await json(owner.agent, 'GET', `/v1/workspaces/${ws.id}/apps/${app.id}`)).body).toMatchObject({
      name: 'Analytical',
      redirect_uris: [`${RP}/new`, 'http://localhost:3000/cb'],
      dev_mode: true,
    })

    await page.getByLabel('Keep the old secret working for').selectOption('1')
    await page.getByRole('button', { name: 'Rotate secret' }).click()
    await page.getByRole('heading', { name: 'New client secret' }).waitFor()
    expect(asked).toEqual(['Rotate the client secret of Analytical?'])
    const secret = (await page.locator('#secret-reveal code[title="Client secret"]').textContent())!
    expect(secret.length).toBeGreaterThanOrEqual(32)
    expect(await page.locator('#previous-secret').textContent()).toContain('keeps working until')
    expect(await page.locator('#reveal-env').textContent()).toContain(`OIDC_CLIENT_SECRET=${secret}`)
    await page.locator('#secret-reveal .secret button').click()
    await page.locator('#secret-reveal .secret button', { hasText: 'Copied' }).waitFor()
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret)
    // Both work within the hour of grace.
    expect((await clientCredentials(ws.auth_url, app.client_id, secret)).status).toBe(200)
    expect((await clientCredentials(ws.auth_url, app.client_id, app.client_secret)).status).toBe(200)

    // Shown once: a reload shows no secret.
    await page.reload()
    await page.getByRole('heading', { name: 'Analytical', level: 1 }).waitFor()
    expect(await page.locator('#secret-reveal').count()).toBe(0)
    expect(await page.content()).not.toContain(secret)

    await page.getByRole('button', { name: 'Delete Analytical' }).click()
    await page.waitForURL(`${server.baseUrl}/app/workspaces/${ws.id}/apps`)
    await page.getByText('No apps yet').waitFor()
    expect(asked[1]).toContain('Delete Analytical?')
    expect((await json(owner.agent, 'GET', `/v1/workspaces/${ws.id}/apps/${app.id}`)).status).toBe(404)
    expect([...errors, ...problems]).toEqual([])
    await context.close()
  }, 60_000)
})
