// legs: once — pages in Chromium; the services behind them are tested on both stores by the API tests
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Page } from 'playwright-core'
import { SUBSCRIBABLE_EVENTS } from '../src/events/emit'
import { settled, sharedBrowser, signedInPage } from './support/browser'
import { activeWorkspace } from './support/instances'
import { checkAccessibility, checkNarrowViewport, collectConsoleErrors } from './support/page-checks'
import { startTestServer, type TestServer } from './support/server'
import { json, type PlatformUser, signUpUser } from './support/users'

// Issue 57, item 6 ("Finish") in headless Chromium, on Settings → Branding, Webhooks and Audit log of a
// server without billing: nothing in the console and nothing refused by the page's policy, no serious
// or critical axe-core violation, no sideways scrolling at 375 px; the colour pickers follow their hex
// fields and the preview stays after Save; the webhook form describes each event and offers no billing
// event; the audit log's filters are choices. One server, one browser, one signed-in page.

const ownerUser = { email: 'grace@example.com', password: 'compiler-a0-1952', name: 'Grace Hopper' }
const BILLING_EVENTS = ['plan.changed', 'subscription.past_due', 'mau.threshold_warning', 'signups_blocked']

await sharedBrowser()
let server: TestServer
let owner: PlatformUser
let ws: string
let page: Page
let problems: () => Promise<string[]>

const settingsUrl = (path: string) => `${server.baseUrl}/app/workspaces/${ws}/settings/${path}`

/** What every page must hold, at desktop width and then at 375 px. */
async function expectCleanPage() {
  expect(await problems()).toEqual([])
  expect(await checkAccessibility(page)).toEqual([])
  expect(await checkNarrowViewport(page)).toEqual([])
  await page.setViewportSize({ width: 1280, height: 800 })
}

beforeAll(async () => {
  server = await startTestServer()
  owner = await signUpUser(server, ownerUser)
  ws = await activeWorkspace(server.core, owner.id)
  ;({ page } = await signedInPage(server.baseUrl, ownerUser))
  problems = await collectConsoleErrors(page)
})
afterAll(() => server?.stop())

describe('Settings → Branding', () => {
  it('loads with nothing refused by its policy, accessible and 375 px wide', async () => {
    await page.goto(settingsUrl('branding'))
    await page.getByRole('heading', { name: 'Branding' }).waitFor()
    await expectCleanPage()
  })

  it('pairs each colour with a picker that follows its hex field, both ways', async () => {
    const picker = page.getByLabel('Primary colour picker')
    expect(await picker.getAttribute('type')).toBe('color')
    await page.getByLabel('Primary colour', { exact: true }).fill('#12ab34')
    expect(await picker.inputValue()).toBe('#12ab34')
    await picker.fill('#336699')
    expect(await page.getByLabel('Primary colour', { exact: true }).inputValue()).toBe('#336699')
    // The preview follows a picked colour as it follows a typed one.
    expect(
      await page
        .locator('#branding-preview-button')
        .evaluate((el) => getComputedStyle(el).getPropertyValue('background-color')),
    ).toBe('rgb(51, 102, 153)')
    for (const label of ['Background colour picker', 'Text colour picker'])
      expect(await page.getByLabel(label).getAttribute('type')).toBe('color')
  })

  it('keeps the preview after Save, with nothing refused by the policy', async () => {
    await page.getByLabel('Display name').fill('Acme')
    const posted = page.waitForResponse(
      (r) => r.request().method() === 'POST' && r.url().endsWith('/branding'),
    )
    await page.getByRole('button', { name: 'Save branding' }).click()
    expect((await posted).status()).toBe(200)
    await settled(page)
    await page.getByText('Saved. The hosted pages show it now.').waitFor()
    expect(await page.locator('#branding-preview').isVisible()).toBe(true)
    expect(await page.locator('#branding-preview-name').textContent()).toBe('Acme')
    expect(await page.getByLabel('Primary colour picker').inputValue()).toBe('#336699')
    // The preview still follows the form after the swap.
    await page.getByLabel('Display name').fill('Acme Two')
    expect(await page.locator('#branding-preview-name').textContent()).toBe('Acme Two')
    expect((await json(owner.agent, 'GET', `/v1/workspaces/${ws}/branding`)).body).toMatchObject({
      display_name: 'Acme',
      primary_color: '#336699',
    })
    await expectCleanPage()
  })
})

describe('Settings → Webhooks', () => {
  it('describes each event in plain words and offers no billing event while billing is off', async () => {
    await page.goto(settingsUrl('webhooks'))
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor()
    const events = page.locator('#webhook-events')
    const offered = await events
      .locator('input[type=checkbox]')
      .evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value))
    expect(offered).toEqual(SUBSCRIBABLE_EVENTS.filter((e) => !BILLING_EVENTS.includes(e)))
    for (const type of BILLING_EVENTS) expect(await events.getByText(type).count()).toBe(0)
    // Each box is described (SPEC "Events"), and the description is tied to it.
    expect(await page.getByLabel('user.created').getAttribute('aria-describedby')).toBeTruthy()
    await events.getByText('A new user completed signup').waitFor()
    await events.getByText('A tenant is deleted').waitFor()
    await expectCleanPage()
  })
})

describe('Settings → Audit log', () => {
  it('filters by actor and action through choices, the table scrolling inside its card', async () => {
    await json(owner.agent, 'POST', `/v1/workspaces/${ws}/apps`, {
      name: 'Shop',
      app_type: 'spa',
      redirect_uris: ['https://rp.example.com/cb'],
    })
    await page.goto(settingsUrl('audit-log'))
    await page.getByRole('heading', { name: 'Audit log' }).waitFor()
    const actor = page.getByLabel('Actor')
    const action = page.getByLabel('Action')
    expect(await actor.evaluate((el) => el.tagName)).toBe('SELECT')
    expect(await action.evaluate((el) => el.tagName)).toBe('SELECT')
    const actors = await actor
      .locator('option')
      .evaluateAll((os) => os.map((o) => [(o as HTMLOptionElement).value, o.textContent?.trim()]))
    expect(actors).toContainEqual([`user:${owner.id}`, expect.stringContaining('Grace Hopper')])
    const actions = await action
      .locator('option')
      .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value))
    expect(actions).toContain('app.created')
    expect(actions).toContain('branding.updated')

    await action.selectOption('branding.updated')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL(/action=branding.updated/)
    await settled(page)
    const rows = page.locator('table.audit tbody tr')
    expect(await rows.count()).toBe(1)
    // The user agent is cut short in the cell (the whole of it on hover), and the table scrolls
    // inside its card rather than widening the page.
    const agent = rows.first().locator('.user-agent')
    expect((await agent.textContent())!.length).toBeLessThanOrEqual(40)
    expect(await agent.getAttribute('title')).toBeTruthy()
    expect(await page.locator('.table-scroll').evaluate((el) => getComputedStyle(el).overflowX)).toBe('auto')
    await expectCleanPage()
  })
})

describe("the workspace's issuer URL in a browser", () => {
  it('is a page naming the workspace with its documents linked, accessible and 375 px wide', async () => {
    await page.goto(`${server.baseUrl}/i/${ws}`)
    await page.getByRole('heading', { name: 'Acme' }).waitFor()
    await page.getByRole('link', { name: 'OpenID configuration (discovery)' }).waitFor()
    await page.getByRole('link', { name: 'Signing keys (JWKS)' }).waitFor()
    await expectCleanPage()
  })
})
