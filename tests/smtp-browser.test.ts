// legs: once — pages in Chromium; the services behind them are tested on both stores by the API tests
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Page } from 'playwright-core'
import { acceptConfirmations, settled, sharedBrowser, signedInPage } from './support/browser'
import { activeWorkspace } from './support/instances'
import { startTestServer, type TestServer } from './support/server'
import { type SmtpSink, startSmtpServer } from './support/smtp'
import { json, type PlatformUser, signUpUser } from './support/users'

// Issue 30 in headless Chromium: Settings → SMTP. An owner finds the platform's server in effect,
// is refused a test mail through it to another address (issue 56), is refused a bad port next to the field (what was typed kept, never the password), saves the
// workspace's own server, sends a test mail and reads the server's answer, sees a failing server's
// last error, and reverts to the platform's server after a confirmation. The cases build on each
// other, in file order, on one server and one browser.

const ownerUser = { email: 'radia@example.com', password: 'spanning-tree-1985', name: 'Radia Perlman' }
const PASSWORD = 'smtp-pass-7f3e2d'
const WRONG = 'smtp-wrong-1a2b3c'

await sharedBrowser()
let server: TestServer
let smtp: SmtpSink
let owner: PlatformUser
let ws: string
let smtpUrl: string
let page: Page
let errors: string[] = []
const confirmations: string[] = []

const inEffect = async () => (await json(owner.agent, 'GET', `/v1/workspaces/${ws}/smtp`)).body

/** Clicks a button of the page and waits for the POST it sends to be answered and settled. */
async function press(button: string, path: string): Promise<number> {
  const posted = page.waitForResponse(
    (r) => r.request().method() === 'POST' && r.url() === `${smtpUrl}${path}`,
  )
  await page.getByRole('button', { name: button }).click()
  const status = (await posted).status()
  await settled(page)
  return status
}

async function fillServer(password: string, port: string) {
  await page.getByLabel('Host').fill('127.0.0.1')
  await page.getByLabel('Port').fill(port)
  await page.getByLabel('Security').selectOption('none')
  await page.getByLabel('Username (optional)').fill('mailer')
  await page.getByLabel('Password (optional)').fill(password)
  await page.getByLabel('Sender address').fill('auth@acme.test')
  await page.getByLabel('Sender name (optional)').fill('Acme <Auth>')
}

beforeAll(async () => {
  smtp = await startSmtpServer({ password: PASSWORD })
  server = await startTestServer({ SMTP_ALLOW_PRIVATE: 'true' })
  owner = await signUpUser(server, ownerUser)
  ws = await activeWorkspace(server.core, owner.id)
  smtpUrl = `${server.baseUrl}/app/workspaces/${ws}/settings/smtp`
})
afterAll(async () => {
  await server?.stop()
  await smtp?.close()
})

describe('Settings → SMTP in the dashboard', () => {
  it("is linked from the workspace settings and shows the platform's default in effect: the dev outbox here", async () => {
    ;({ page, errors } = await signedInPage(server.baseUrl, ownerUser))
    acceptConfirmations(page, confirmations)
    await page.goto(`${server.baseUrl}/app/workspaces/${ws}/settings`)
    await page.getByRole('link', { name: 'SMTP' }).click()
    await page.waitForURL(smtpUrl)
    await page.getByRole('heading', { name: 'SMTP', level: 1 }).waitFor()
    expect(await page.locator('#smtp-in-effect').textContent()).toContain(
      "No mail server: the platform has none (SMTP_URL is unset), so this workspace's mail is kept in the development outbox",
    )
    expect(await page.getByLabel('Password (optional)').getAttribute('type')).toBe('password')
    expect(await page.getByRole('button', { name: "Revert to the platform's server" }).count()).toBe(0)
  })

  it("refuses a test mail through the platform's server to anyone but the owner, next to the field", async () => {
    await page.locator('#smtp-test-to').fill('someone-else@example.com')
    expect(await press('Send test mail', '/test')).toBe(422)
    expect(await page.locator('#smtp-test-to-error').textContent()).toBe(
      "Through the platform's mail server a test mail goes only to your own verified address. Set up this workspace's own server to test any address.",
    )
    expect(await page.getByLabel('To').getAttribute('aria-invalid')).toBe('true')
    expect(await page.getByLabel('To').inputValue()).toBe('someone-else@example.com')
    expect(await page.locator('#smtp-test-result').textContent()).toBe('')
  })

  it('refuses a bad port next to the field, keeping what was typed but the password', async () => {
    await fillServer(PASSWORD, 'not a port')
    expect(await press('Save SMTP settings', '')).toBe(422)
    expect(await page.locator('#smtp-port-error').textContent()).toBe('Enter a port number.')
    expect(await page.getByLabel('Port').getAttribute('aria-invalid')).toBe('true')
    expect(await page.getByLabel('Host').inputValue()).toBe('127.0.0.1')
    expect(await page.getByLabel('Sender name (optional)').inputValue()).toBe('Acme <Auth>')
    expect(await page.getByLabel('Password (optional)').inputValue()).toBe('')
    expect(await page.content()).not.toContain(PASSWORD)
    expect((await inEffect()).provider).toBe('platform')
  })

  it('saves the workspace\'s own server, and "Send test mail" shows the server\'s answer', async () => {
    await fillServer(PASSWORD, String(smtp.port))
    expect(await press('Save SMTP settings', '')).toBe(200)
    await page.getByText("Saved. This workspace's mail goes through this server from now on.").waitFor()
    expect(await page.locator('#smtp-in-effect').textContent()).toContain(`127.0.0.1:${smtp.port}`)
    // The sender name is text, escaped, not markup.
    expect(await page.locator('#smtp-in-effect').textContent()).toContain('Acme <Auth> <auth@acme.test>')
    expect(await inEffect()).toMatchObject({ provider: 'custom', port: smtp.port, has_password: true })
    expect(await page.content()).not.toContain(PASSWORD)

    await page.locator('#smtp-test-to').fill('tester@example.com')
    expect(await press('Send test mail', '/test')).toBe(200)
    const answer = await page.locator('#smtp-test-result').textContent()
    expect(answer).toMatch(/Sent\. The server answered: 250 /)
    const mail = await smtp.waitFor((m) => JSON.stringify(m.to).includes('tester@example.com'))
    expect(mail.from?.value).toEqual([{ address: 'auth@acme.test', name: 'Acme <Auth>' }])
  })

  it("shows a failing server's error on the test and, reloaded, its last error and time", async () => {
    await fillServer(WRONG, String(smtp.port))
    expect(await press('Save SMTP settings', '')).toBe(200)
    await page.locator('#smtp-test-to').fill('tester@example.com')
    expect(await press('Send test mail', '/test')).toBe(200)
    expect(await page.locator('#smtp-test-result').textContent()).toContain(
      `Not sent. 127.0.0.1:${smtp.port} refused the username or password`,
    )
    await page.reload()
    const lastError = await page.locator('#smtp-last-error').textContent()
    expect(lastError).toMatch(
      /Delivery failed at \d{4}-\d\d-\d\dT[\d:.]+Z: 127\.0\.0\.1:\d+ refused the username/,
    )
    expect(await page.content()).not.toContain(WRONG)
  })

  it("reverts to the platform's server after a confirmation", async () => {
    expect(await press("Revert to the platform's server", '/revert')).toBe(200)
    expect(confirmations.at(-1)).toContain("Go back to the platform's mail server?")
    await page.getByText("Back to the platform's mail server.").waitFor()
    expect(await page.locator('#smtp-in-effect').textContent()).toContain(
      "No mail server: the platform has none (SMTP_URL is unset), so this workspace's mail is kept in the development outbox",
    )
    expect((await inEffect()).provider).toBe('platform')
    expect(errors).toEqual([])
  })
})
