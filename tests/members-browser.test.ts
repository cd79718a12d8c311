// legs: once — pages in Chromium; the services behind them are tested on both stores by the API tests
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { ParsedMail } from 'mailparser'
import { ManualClock } from '../src/shared/clock'
import { settled, sharedBrowser, signUpInBrowser } from './support/browser'
import { activeWorkspace } from './support/instances'
import { startTestServer, type TestServer } from './support/server'
import { type SmtpSink, startSmtpServer } from './support/smtp'
import { json, signUpUser, verifyPlatformEmail } from './support/users'

// Issue 25, item 1 (members) in headless Chromium: Settings → Members (add an account, invite an
// address, change a role, the last owner's refusal in the row, remove and cancel behind a
// confirmation), and an invitee who signs up on the platform from the mailed link and joins.

const clock = new ManualClock(Date.now())
let smtp: SmtpSink
let server: TestServer

beforeAll(async () => {
  smtp = await startSmtpServer()
  server = await startTestServer({ SMTP_URL: smtp.url }, undefined, { clock })
})
afterAll(async () => {
  await server.stop()
  await smtp.close()
})

const recipients = (mail: ParsedMail) =>
  [mail.to ?? []].flat().flatMap((a) => a.value.map((v) => v.address?.toLowerCase()))

describe('Settings → Members in the dashboard', () => {
  it('adds, invites, changes roles, keeps the last owner, removes; the invitee joins from the mail', async () => {
    const ada = { email: 'ada@example.com', password: 'analytical-engine-1', name: 'Ada Lovelace' }
    const owner = await signUpUser(server, ada)
    await signUpUser(server, {
      email: 'charles@example.com',
      password: 'difference-engine',
      name: 'Charles Babbage',
    })
    // Added at once only with a proved address (the others are invited by mail).
    await verifyPlatformEmail(server, 'charles@example.com')
    const ws = await activeWorkspace(server.core, owner.id)
    const membersUrl = `${server.baseUrl}/app/workspaces/${ws}/settings/members`

    const browser = await sharedBrowser()
    const context = await browser.newContext()
    const page = await context.newPage()
    const errors: string[] = []
    page.on('pageerror', (e) => errors.push(e.message))
    await page.goto(`${server.baseUrl}/v1/auth/login`)
    await page.getByLabel('Email').fill(ada.email)
    await page.getByLabel('Password').fill(ada.password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(`${server.baseUrl}/app/`)

    // From the workspace's settings to its members: Ada alone, an owner.
    await page.goto(`${server.baseUrl}/app/workspaces/${ws}/settings`)
    await page.getByRole('link', { name: 'Members' }).click()
    await page.waitForURL(membersUrl)
    await expect(page.locator('#member-rows tr').count()).resolves.toBe(1)
    await page.locator('#member-rows tr', { hasText: 'ada@example.com (you)' }).waitFor()

    // An existing account joins at once; adding it again is refused at the email field.
    await page.getByLabel('Email').fill('Charles@example.com')
    await page.getByLabel('Role', { exact: true }).selectOption('developer')
    await page.getByRole('button', { name: 'Add member' }).click()
    await page.getByText('charles@example.com is now a member (developer).').waitFor()
    await settled(page)
    const charles = page.locator('#member-rows tr', { hasText: 'charles@example.com' })
    expect(await charles.getByLabel('Role of Charles Babbage').inputValue()).toBe('developer')
    await page.getByLabel('Email').fill('charles@example.com')
    await page.getByRole('button', { name: 'Add member' }).click()
    await page.locator('#member-email-error', { hasText: 'already a member' }).waitFor()
    await settled(page)
    expect(await page.getByLabel('Email').inputValue()).toBe('charles@example.com')

    // Any other address is invited.
    await page.getByLabel('Email').fill('grace@example.com')
    await page.getByLabel('Role', { exact: true }).selectOption('viewer')
    await page.getByRole('button', { name: 'Add member' }).click()
    await page.getByText('Invitation to grace@example.com queued for sending.').waitFor()
    await settled(page)
    const grace = page.locator('#member-rows tr', { hasText: 'grace@example.com' })
    expect(await grace.locator('.badge').textContent()).toBe('invited')

    // A role changes as it is chosen.
    const patched = page.waitForResponse((r) => r.request().method() === 'PATCH')
    await charles.getByLabel('Role of Charles Babbage').selectOption('admin')
    expect((await patched).status()).toBe(200)
    await page.reload()
    expect(await charles.getByLabel('Role of Charles Babbage').inputValue()).toBe('admin')

    // The last owner stays one: the row says why, and shows the role as it is.
    const you = page.locator('#member-rows tr', { hasText: '(you)' })
    await you.getByLabel('Role of Ada Lovelace').selectOption('viewer')
    await you.getByText('A workspace needs an owner: make someone else an owner first').waitFor()
    expect(await you.getByLabel('Role of Ada Lovelace').inputValue()).toBe('owner')

    // Remove asks first: dismissed, the row stays; confirmed, it goes.
    page.once('dialog', (d) => d.dismiss())
    await page.getByRole('button', { name: 'Remove Charles Babbage' }).click()
    await Bun.sleep(300)
    await expect(charles.count()).resolves.toBe(1)
    let asked = ''
    page.once('dialog', (d) => {
      asked = d.message()
      void d.accept()
    })
    await page.getByRole('button', { name: 'Remove Charles Babbage' }).click()
    await charles.waitFor({ state: 'detached' })
    expect(asked).toBe('Remove Charles Babbage from this workspace? They lose access at once.')

    // An invitation is cancelled the same way.
    await page.getByLabel('Email').fill('temp@example.com')
    await page.getByRole('button', { name: 'Add member' }).click()
    await page.getByText('Invitation to temp@example.com queued for sending.').waitFor()
    await settled(page)
    page.once('dialog', (d) => d.accept())
    await page.getByRole('button', { name: 'Cancel invitation of temp@example.com' }).click()
    await page.locator('#member-rows tr', { hasText: 'temp@example.com' }).waitFor({ state: 'detached' })

    // Grace opens the mailed link signed out, creates her platform account on the way, and joins.
    await server.tick()
    const mail = await smtp.waitFor(
      (m) => m.subject === 'Join Acme on Gatehouse' && recipients(m).includes('grace@example.com'),
    )
    const link = mail.text?.match(/https?:\/\/\S+/)?.[0]
    expect(link).toStartWith(`${server.baseUrl}/app/invitation?token=`)
    expect(mail.text).toContain('Ada Lovelace invited you to the workspace Acme on Gatehouse, as viewer.')
    const graceContext = await browser.newContext()
    const gracePage = await graceContext.newPage()
    gracePage.on('pageerror', (e) => errors.push(e.message))
    await gracePage.goto(link!)
    await gracePage.getByRole('heading', { name: 'Join Acme' }).waitFor()
    await gracePage.getByRole('link', { name: 'Sign in or create an account' }).click()
    await signUpInBrowser(gracePage, {
      name: 'Grace Hopper',
      email: 'grace@example.com',
      password: 'cobol-compiler-1',
    })
    await gracePage.waitForURL(link!)
    await gracePage.getByText('You are invited to the workspace Acme as viewer.').waitFor()
    await gracePage.getByRole('button', { name: 'Accept invitation' }).click()
    await gracePage.waitForURL(`${server.baseUrl}/app/workspaces/${ws}`)
    await gracePage.getByRole('heading', { name: 'Acme' }).waitFor()

    // She is a viewer: the list without the controls of an admin.
    await gracePage.goto(membersUrl)
    await gracePage.locator('#member-rows tr', { hasText: 'grace@example.com (you)' }).waitFor()
    await expect(gracePage.getByRole('button', { name: 'Add member' }).count()).resolves.toBe(0)
    await expect(gracePage.locator('#member-rows select').count()).resolves.toBe(0)

    await page.reload()
    expect(await grace.locator('.badge').textContent()).toBe('active')
    const listed = await json(owner.agent, 'GET', `/v1/workspaces/${ws}/members`)
    expect(listed.body.items.map((m: { email: string; role: string }) => `${m.email} ${m.role}`)).toEqual([
      'ada@example.com owner',
      'grace@example.com viewer',
    ])

    expect(errors).toEqual([])
    await graceContext.close()
    await context.close()
  }, 90_000)
})
