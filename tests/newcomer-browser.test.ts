// legs: once — pages in Chromium; the services behind them are tested on both stores by the API tests
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdirSync, rmSync } from 'node:fs'
import type { BrowserContext, Page } from 'playwright-core'
import { claimCell, settled, sharedBrowser } from './support/browser'
import { checkAccessibility, checkNarrowViewport, collectConsoleErrors } from './support/page-checks'
import { freePort, startTestServer, type TestServer } from './support/server'

// Issue 57's first must-hold, in headless Chromium: the newcomer's path on the README's default
// configuration (`npm start`: HOST 0.0.0.0, a loopback BASE_URL, no SMTP, so the dev outbox is on
// by itself). Sign up and verify through the outbox, create a workspace and an SPA app, Try
// sign-in and read the claims, invite someone and accept from the outbox. Every page visited holds
// nothing in the console, nothing refused by its policy, no serious accessibility violation and no
// sideways scrolling at 375 px (tests/support/page-checks.ts); a screenshot of each step is kept in
// test-artifacts/newcomer/. The cases walk on, in file order, on one server and one browser.

const admin = { name: 'Ada Lovelace', email: 'ada@example.com', password: 'analytical-engine-1843' }
const endUser = { name: 'Grace Hopper', email: 'grace@example.com', password: 'cobol-compiler-1959' }
const invited = { name: 'Charles Babbage', email: 'charles@example.com', password: 'difference-engine-1822' }
const ARTIFACTS = new URL('../test-artifacts/newcomer/', import.meta.url)
const WIDE = { width: 1280, height: 900 }

await sharedBrowser()
let server: TestServer
let context: BrowserContext
let page: Page
let problems: () => Promise<string[]>
let ws: string
let step = 0

/** A fresh context and page whose console errors and policy violations are recorded from the start. */
async function openPage(): Promise<{
  context: BrowserContext
  page: Page
  problems: () => Promise<string[]>
}> {
  const context = await (await sharedBrowser()).newContext({ viewport: WIDE })
  const page = await context.newPage()
  return { context, page, problems: await collectConsoleErrors(page) }
}

/**
 * The page as it stands holds every check; its screenshot is kept as NN-name.png. The narrow
 * check leaves the viewport at 375 px: the page is widened again for the walk to go on.
 */
async function holds(p: Page, seen: () => Promise<string[]>, name: string) {
  await settled(p)
  step += 1
  await p.screenshot({
    path: new URL(`${String(step).padStart(2, '0')}-${name}.png`, ARTIFACTS).pathname,
    fullPage: true,
  })
  expect({ name, problems: await seen() }).toEqual({ name, problems: [] })
  expect({ name, accessibility: await checkAccessibility(p) }).toEqual({ name, accessibility: [] })
  expect({ name, narrow: await checkNarrowViewport(p) }).toEqual({ name, narrow: [] })
  await p.setViewportSize(WIDE)
}

/** From a sign-in page: the sign-up form holds every check, then is filled and sent. */
async function signUpChecked(p: Page, seen: () => Promise<string[]>, name: string, user: typeof admin) {
  await p.getByRole('link', { name: 'Create an account' }).click()
  await p.getByRole('button', { name: 'Create account' }).waitFor()
  await holds(p, seen, name)
  await p.getByLabel('Name').fill(user.name)
  await p.getByLabel('Email').fill(user.email)
  await p.getByLabel('Password').fill(user.password)
  await p.getByRole('button', { name: 'Create account' }).click()
}

/** The outbox's newest mail to `to` with `subject`, and the first link in it. */
async function linkInOutbox(p: Page, to: string, subject: string): Promise<string> {
  const mail = p
    .locator('article', { has: p.getByRole('heading', { name: subject }) })
    .filter({ hasText: to })
  const link = await mail.first().locator('pre a').first().getAttribute('href')
  expect(link).toBeTruthy()
  return link!
}

beforeAll(async () => {
  rmSync(ARTIFACTS, { recursive: true, force: true })
  mkdirSync(ARTIFACTS, { recursive: true })
  // As the README's `npm start` runs: listening on every interface, BASE_URL on localhost, no SMTP
  // and no DEV_OUTBOX (the outbox is on because BASE_URL is loopback).
  const port = await freePort()
  server = await startTestServer({
    HOST: '0.0.0.0',
    PORT: String(port),
    BASE_URL: `http://localhost:${port}`,
  })
  ;({ context, page, problems } = await openPage())
})
afterAll(async () => {
  await context?.close()
  await server?.stop()
})

describe("the newcomer's path on the default configuration", () => {
  it('runs as `npm start` does: every interface, a localhost BASE_URL, the dev outbox on', () => {
    expect(server.core.config.host).toBe('0.0.0.0')
    expect(server.baseUrl).toStartWith('http://localhost:')
    expect(server.core.config.smtpUrl).toBeNull()
    expect(server.core.config.devOutbox).toBe(true)
  })

  it('signs up at /app/ as the first account, the administrator, and sees the dev outbox', async () => {
    await page.goto(`${server.baseUrl}/app/`)
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    await holds(page, problems, 'sign-in')
    await signUpChecked(page, problems, 'sign-up', admin)
    await page.waitForURL(`${server.baseUrl}/app/`)
    await page.locator('#dev-outbox-link').waitFor()
    await holds(page, problems, 'dashboard')
  })

  it('opens the outbox from the dashboard and verifies the address by its link', async () => {
    await page.locator('#dev-outbox-link').click()
    await page.waitForURL(`${server.baseUrl}/dev/outbox`)
    await page.getByRole('heading', { name: 'Dev outbox' }).waitFor()
    await holds(page, problems, 'outbox-verification')
    await page.goto(await linkInOutbox(page, admin.email, 'Verify your email address'))
    await page.getByRole('heading', { name: 'Email verified' }).waitFor()
    await holds(page, problems, 'email-verified')
  })

  it('creates a workspace and waits for it to be active', async () => {
    await page.goto(`${server.baseUrl}/app/`)
    await page.getByRole('link', { name: 'New workspace' }).click()
    await page.getByLabel('Workspace name').waitFor()
    await holds(page, problems, 'new-workspace')
    await page.getByLabel('Workspace name').fill('Acme')
    await page.getByRole('button', { name: 'Create workspace' }).click()
    await page.waitForURL(/\/app\/workspaces\/[0-9a-f-]{36}$/)
    ws = new URL(page.url()).pathname.split('/').at(-1)!
    await page.locator('.badge', { hasText: 'Active' }).waitFor({ timeout: 15_000 })
    await holds(page, problems, 'workspace')
  })

  it('creates an SPA app in development mode with a localhost redirect', async () => {
    await page.goto(`${server.baseUrl}/app/workspaces/${ws}/apps`)
    await page.getByRole('button', { name: 'Create app' }).waitFor()
    await holds(page, problems, 'apps')
    await page.getByLabel('Name', { exact: true }).fill('Rocket console')
    await page.getByLabel('Type').selectOption('spa')
    await page.getByLabel('Redirect URIs', { exact: true }).fill('http://localhost:3000/callback')
    await page.getByLabel('Development mode').check()
    await page.getByRole('button', { name: 'Create app' }).click()
    await page.getByText('Client ID').first().waitFor()
    await holds(page, problems, 'app-created')
  })

  it('tries sign-in from the workspace page: an end user signs up at the hosted page and the claims show', async () => {
    await page.goto(`${server.baseUrl}/app/workspaces/${ws}`)
    await page.getByRole('button', { name: 'Try sign-in' }).click()
    await page.waitForURL((u) => u.pathname.startsWith(`/i/${ws}/interaction/`))
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    await holds(page, problems, 'hosted-sign-in')
    await signUpChecked(page, problems, 'hosted-sign-up', endUser)
    // The default login policy asks for a verified address: the newcomer reads the link in the
    // outbox in another tab, and the waiting page goes on by itself.
    await page.getByRole('heading', { name: 'Check your email' }).waitFor()
    await holds(page, problems, 'hosted-check-email')
    const tab = await context.newPage()
    const tabProblems = await collectConsoleErrors(tab)
    await tab.goto(`${server.baseUrl}/dev/outbox`)
    await tab.goto(await linkInOutbox(tab, endUser.email, 'Verify your email address'))
    await tab.getByRole('heading', { name: 'Email verified' }).waitFor()
    await holds(tab, tabProblems, 'hosted-email-verified')
    await tab.close()
    await page.waitForURL((u) => u.pathname === `/app/workspaces/${ws}/try/callback`)
    await page.getByRole('heading', { name: 'Try sign-in: signed in', level: 1 }).waitFor()
    const claim = (name: string) => claimCell(page, name)
    await expect(claim('email').textContent()).resolves.toBe(endUser.email)
    await expect(claim('iss').textContent()).resolves.toBe(`${server.baseUrl}/i/${ws}`)
    await expect(claim('amr').textContent()).resolves.toBe('["pwd"]')
    await holds(page, problems, 'claims')
  })

  it('invites a member from the Members page; the invitation opens from the outbox and is accepted', async () => {
    const membersUrl = `${server.baseUrl}/app/workspaces/${ws}/settings/members`
    await page.goto(membersUrl)
    await page.getByRole('button', { name: 'Add member' }).waitFor()
    await holds(page, problems, 'members')
    await page.getByLabel('Email').fill(invited.email)
    await page.getByLabel('Role', { exact: true }).selectOption('developer')
    await page.getByRole('button', { name: 'Add member' }).click()
    await page.locator('#member-rows tr', { hasText: invited.email }).waitFor()
    await holds(page, problems, 'member-invited')

    await page.goto(`${server.baseUrl}/app/`)
    await page.locator('#dev-outbox-link').click()
    await page.getByRole('heading', { name: 'Dev outbox' }).waitFor()
    const link = await linkInOutbox(page, invited.email, 'Join Acme on Gatehouse')
    await holds(page, problems, 'outbox-invitation')

    // The invited person opens the link in their own browser, signed out.
    const guest = await openPage()
    try {
      await guest.page.goto(link)
      await guest.page.getByRole('heading', { name: 'Join Acme' }).waitFor()
      await holds(guest.page, guest.problems, 'invitation')
      await guest.page.getByRole('link', { name: 'Sign in or create an account' }).click()
      await guest.page.getByRole('heading', { name: 'Sign in' }).waitFor()
      await guest.page.getByRole('heading', { name: 'Sign in' }).waitFor()
      await holds(guest.page, guest.problems, 'invited-sign-in')
      await signUpChecked(guest.page, guest.problems, 'invited-sign-up', invited)
      await guest.page.waitForURL(link)
      await guest.page.getByRole('button', { name: 'Accept invitation' }).waitFor()
      await holds(guest.page, guest.problems, 'invitation-signed-in')
      await guest.page.getByRole('button', { name: 'Accept invitation' }).click()
      await guest.page.waitForURL(`${server.baseUrl}/app/workspaces/${ws}`)
      await guest.page.getByRole('heading', { name: 'Acme' }).waitFor()
      await holds(guest.page, guest.problems, 'joined')
    } finally {
      await guest.context.close()
    }

    await page.goto(membersUrl)
    await page.locator('#member-rows tr', { hasText: invited.name }).waitFor()
    await holds(page, problems, 'member-joined')
  })
})
