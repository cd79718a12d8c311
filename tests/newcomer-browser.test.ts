import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdirSync } from 'node:fs'
import type { BrowserContext, Page } from 'playwright-core'
import { settled, sharedBrowser, signUpInBrowser } from './support/browser'
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
async function openPage(): Promise<{ context: BrowserContext; page: Page; problems: () => Promise<string[]> }> {
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
  await p.screenshot({ path: new URL(`${String(step).padStart(2, '0')}-${name}.png`, ARTIFACTS).pathname, fullPage: true })
  expect({ name, problems: await seen() }).toEqual({ name, problems: [] })
  expect({ name, accessibility: await checkAccessibility(p) }).toEqual({ name, accessibility: [] })
  expect({ name, narrow: await checkNarrowViewport(p) }).toEqual({ name, narrow: [] })
  await p.setViewportSize(WIDE)
}

/** The outbox's newest mail to `to` with `subject`, and the first link in it. */
async function linkInOutbox(p: Page, to: string, subject: string): Promise<string> {
  const mail = p.locator('article', { has: p.getByRole('heading', { name: subject }) }).filter({ hasText: to })
  const link = await mail.first().locator('pre a').first().getAttribute('href')
  expect(link).toBeTruthy()
  return link!
}

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true })
  // As the README's `npm start` runs: listening on every interface, BASE_URL on localhost, no SMTP
  // and no DEV_OUTBOX (the outbox is on because BASE_URL is loopback).
  const port = await freePort()
  server = await startTestServer({ HOST: '0.0.0.0', PORT: String(port), BASE_URL: `http://localhost:${port}` })
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
    await signUpInBrowser(page, admin)
    await page.waitForURL(`${server.baseUrl}/app/`)
    await page.locator('#dev-outbox-link').waitFor()
    await holds(page, problems, 'dashboard')
  })
})
