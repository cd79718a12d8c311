import { afterAll } from 'bun:test'
import { type Browser, chromium, type Page } from 'playwright-core'

let browser: Browser | null = null

/** Debian's Chromium driven by playwright-core (never a downloaded browser); one per test file. */
export async function sharedBrowser(): Promise<Browser> {
  if (!browser) {
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    })
    afterAll(async () => {
      await browser?.close()
      browser = null
    })
  }
  return browser
}

/** From a hosted sign-in page: follows "Create an account", fills the form and sends it. */
export async function signUpInBrowser(page: Page, user: { name?: string; email: string; password: string }) {
  await page.getByRole('link', { name: 'Create an account' }).click()
  if (user.name !== undefined) await page.getByLabel('Name').fill(user.name)
  await page.getByLabel('Email').fill(user.email)
  await page.getByLabel('Password').fill(user.password)
  await page.getByRole('button', { name: 'Create account' }).click()
}

/**
 * A new browser context signed in to the dashboard as a platform user (the hosted sign-in form),
 * on /app/, with the page's script errors collected in `errors` (a test ends expecting none).
 */
export async function signedInPage(baseUrl: string, user: { email: string; password: string }) {
  const context = await (await sharedBrowser()).newContext({ acceptDownloads: true })
  const page = await context.newPage()
  const errors: string[] = []
  page.on('pageerror', (e) => errors.push(e.message))
  await page.goto(`${baseUrl}/v1/auth/login`)
  await page.getByLabel('Email').fill(user.email)
  await page.getByLabel('Password').fill(user.password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(`${baseUrl}/app/`)
  return { context, page, errors }
}

/**
 * htmx wires what a swap brought in only once it settled (`htmx-added` is gone then): an element
 * used before that answers like plain HTML, so a test waits as a person's reading would.
 */
export const settled = (page: Page) =>
  page.waitForFunction(() => !document.querySelector('.htmx-added, .htmx-settling'))

/** Accepts every confirmation the page asks from now on (hx-confirm), recording its message in `asked`. */
export function acceptConfirmations(page: Page, asked: string[]): void {
  page.on('dialog', (d) => {
    asked.push(d.message())
    void d.accept()
  })
}

/** The value cell of a claim's row on Try sign-in's page of claims, found by the claim's exact name. */
export const claimCell = (page: Page, name: string) =>
  page
    .locator('#try-claims tbody tr')
    .filter({ has: page.locator('td:first-child code', { hasText: new RegExp(`^${name}$`) }) })
    .locator('td:nth-child(2)')
