// legs: once — pages in Chromium; the services behind them are tested on both stores by the API tests
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { TOTP } from 'otpauth'
import { inviteAccount, listAccounts } from '../src/identity'
import { startTotpEnrolment, useTotpCode } from '../src/identity/mfa/totp'
import { settled, signedInPage } from './support/browser'
import { activeWorkspace } from './support/instances'
import { besidesRefusals, collectConsoleErrors } from './support/page-checks'
import { startTestServer, type TestServer } from './support/server'
import { json, signUpUser } from './support/users'

// Issue 20, item 5 (users): the dashboard's users page in headless Chromium — invite (inline
// errors, the new row joining the table), search, pages, reset MFA and delete with a confirmation.
// Issue 57 item 6: the count above the table follows an invitation and a delete without a reload.

let server: TestServer

beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.stop())

/** An owner of a new workspace, signed in in a browser page that collects what the console says. */
async function ownerOnPage(owner: { email: string; password: string; name: string }) {
  const platform = await signUpUser(server, owner)
  const ws = await activeWorkspace(server.core, platform.id)
  const { context, page, errors } = await signedInPage(server.baseUrl, owner)
  const problems = await collectConsoleErrors(page)
  const shownCount = () => page.locator('#user-count').textContent()
  return { platform, ws, context, page, errors, problems, shownCount }
}

describe("a workspace's users in the dashboard", () => {
  it('invites, searches, pages, resets MFA and deletes with a confirmation', async () => {
    const { platform, ws, context, page, errors, problems, shownCount } = await ownerOnPage({
      email: 'frances@example.com',
      password: 'compiler-optimisation-1',
      name: 'Frances Allen',
    })

    // From the workspace page to its users.
    await page.goto(`${server.baseUrl}/app/workspaces/${ws}`)
    await page.getByRole('link', { name: 'Users', exact: true }).click()
    await page.waitForURL(`${server.baseUrl}/app/workspaces/${ws}/users`)
    await page.getByText('No users yet').waitFor()
    expect(await shownCount()).toBe('0 users')

    // Inline errors: the model's rule, then the 409 of a known address, at the email field.
    await page.getByLabel('Email').fill('not-an-address')
    await page.evaluate(() => document.querySelector('#invite-form')?.setAttribute('novalidate', ''))
    await page.getByRole('button', { name: 'Send invitation' }).click()
    await page.locator('#invite-email-error', { hasText: 'Enter a valid email address.' }).waitFor()

    await page.getByLabel('Email').fill('jean@example.com')
    await page.getByLabel('Name (optional)').fill('Jean Sammet')
    await page.getByRole('button', { name: 'Send invitation' }).click()
    await page
      .getByText('Invitation to jean@example.com kept in the dev outbox (no mail server is set).')
      .waitFor()
    const jean = page.locator('#user-rows tr', { hasText: 'jean@example.com' })
    await jean.waitFor()
    expect(await jean.locator('.badge').textContent()).toBe('invited')
    expect(await page.getByText('No users yet').isVisible()).toBe(false)
    // The form was emptied for the next one.
    expect(await page.getByLabel('Email').inputValue()).toBe('')
    expect(await shownCount()).toBe('1 user')
    // A second one in a row: its row and count find their places too (no htmx:oobErrorNoTarget).
    await page.getByLabel('Email').fill('grace@example.com')
    await page.getByRole('button', { name: 'Send invitation' }).click()
    await page.locator('#user-rows tr', { hasText: 'grace@example.com' }).waitFor()
    expect(await shownCount()).toBe('2 users')

    await page.getByLabel('Email').fill('JEAN@example.com')
    await page.getByRole('button', { name: 'Send invitation' }).click()
    await page.locator('#invite-email-error', { hasText: 'already exists' }).waitFor()
    expect(await page.getByLabel('Email').inputValue()).toBe('JEAN@example.com')
    expect(await shownCount()).toBe('2 users')

    // Enough users for a second page (50 a page).
    for (let i = 0; i < 49; i++) {
      const n = String(i).padStart(2, '0')
      await inviteAccount(
        server.core,
        ws,
        { email: `user${n}@example.com`, name: `User ${n}` },
        async () => {},
      )
    }
    await page.reload()
    expect(await page.locator('#user-count').textContent()).toBe('51 users')
    await expect(page.locator('#user-rows tr').count()).resolves.toBe(50)
    await page.getByRole('link', { name: 'Next page' }).click()
    await page.waitForURL(/cursor=/)
    await expect(page.locator('#user-rows tr').count()).resolves.toBe(1)
    await page.locator('#user-rows tr', { hasText: 'user48@example.com' }).waitFor()

    // Search by a name prefix, in another case.
    await page.getByLabel('Search').fill('jean s')
    await page.getByRole('button', { name: 'Search' }).click()
    await page.waitForURL(/q=jean/)
    expect(await page.locator('#user-count').textContent()).toBe('1 user found')
    await expect(page.locator('#user-rows tr').count()).resolves.toBe(1)
    await jean.waitFor()

    // Jean sets up an authenticator app: the row says so.
    await jean.getByText('no MFA').waitFor()
    const [account] = (await listAccounts(server.core, ws, { limit: 1, after: null, q: 'jean' })).items
    const enrolment = await startTotpEnrolment(server.core, account!, 'test')
    const code = new TOTP({ secret: enrolment!.secret }).generate({ timestamp: server.core.clock.now() })
    expect(await useTotpCode(server.core.store, server.core, account!.id, code, { confirm: true })).toBe(true)
    await page.reload()
    await jean.getByText('MFA: authenticator app').waitFor()

    // Reset MFA asks first, then says it is done; the app is gone.
    page.once('dialog', (d) => d.accept())
    await page.getByRole('button', { name: 'Reset MFA of Jean Sammet' }).click()
    await jean.getByText('MFA reset.').waitFor()
    await page.reload()
    await jean.getByText('no MFA').waitFor()

    // Delete asks first: dismissed, the row stays; confirmed, it goes.
    page.once('dialog', (d) => d.dismiss())
    await page.getByRole('button', { name: 'Delete Jean Sammet' }).click()
    await Bun.sleep(300)
    await expect(jean.count()).resolves.toBe(1)
    let asked = ''
    page.once('dialog', (d) => {
      asked = d.message()
      void d.accept()
    })
    await page.getByRole('button', { name: 'Delete Jean Sammet' }).click()
    await jean.waitFor({ state: 'detached' })
    expect(asked).toBe('Delete Jean Sammet? They are signed out everywhere at once.')
    // Counted as the page lists: within its search.
    expect(await shownCount()).toBe('0 users found')
    // The last row gone, the table says why it is empty, without a reload.
    expect(await page.getByText("No user's email or name starts with “jean s”.").isVisible()).toBe(true)
    await page.goto(`${server.baseUrl}/app/workspaces/${ws}/users`)
    expect(await shownCount()).toBe('50 users')
    page.once('dialog', (d) => void d.accept())
    await page.getByRole('button', { name: 'Delete User 00' }).click()
    await page.locator('#user-rows tr', { hasText: 'user00@example.com' }).waitFor({ state: 'detached' })
    expect(await shownCount()).toBe('49 users')
    const left = await json(platform.agent, 'GET', `/v1/workspaces/${ws}/users?q=jean`)
    expect(left.body).toEqual({ items: [], total: 0, next_cursor: null })

    expect(errors).toEqual([])
    expect(besidesRefusals(await problems(), [409, 422])).toEqual([])
    await context.close()
  }, 60_000)

  it('lists an invited user under a search only when the search finds them, and says so otherwise', async () => {
    const { ws, context, page, errors, problems, shownCount } = await ownerOnPage({
      email: 'karen@example.com',
      password: 'inverse-document-1',
      name: 'Karen Jones',
    })
    const empty = page.getByText("No user's email or name starts with “ada”.")

    await page.goto(`${server.baseUrl}/app/workspaces/${ws}/users?q=ada`)
    expect(await shownCount()).toBe('0 users found')
    await page.getByLabel('Email').fill('grace@example.com')
    await page.getByRole('button', { name: 'Send invitation' }).click()
    await page.getByText('Invitation to grace@example.com').waitFor()
    await settled(page)
    await expect(page.locator('#user-rows tr').count()).resolves.toBe(0)
    expect(await shownCount()).toBe('0 users found (1 added, hidden by this search)')
    expect(await empty.isVisible()).toBe(true)

    // One the search finds (by name, in another case) joins the table.
    await page.getByLabel('Email').fill('lovelace@example.com')
    await page.getByLabel('Name (optional)').fill('ADA Lovelace')
    await page.getByRole('button', { name: 'Send invitation' }).click()
    await page.locator('#user-rows tr', { hasText: 'lovelace@example.com' }).waitFor()
    expect(await shownCount()).toBe('1 user found')
    expect(await empty.isVisible()).toBe(false)

    expect(errors).toEqual([])
    expect(besidesRefusals(await problems(), [])).toEqual([])
    await context.close()
  }, 60_000)
})
