// legs: once — pages in Chromium; the services behind them are tested on both stores by the API tests
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { signUp } from '../src/identity'
import { settled, signedInPage } from './support/browser'
import { activeWorkspace } from './support/instances'
import { besidesRefusals, collectConsoleErrors } from './support/page-checks'
import { startTestServer, type TestServer } from './support/server'
import { json, signUpUser } from './support/users'

// Issue 26, item 1 (the dashboard): the Tenants page of a workspace in headless Chromium — create
// (inline errors from the API's model, a taken slug at its field), search and pages, a tenant's
// page with its members added by email and by id and removed, and deleting the tenant behind a
// confirmation. One browser and one server for the file. Issue 57 item 6: the counts over the
// tenants and the members follow a create, an add and a remove without a reload.

let server: TestServer

beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.stop())

describe("a workspace's tenants in the dashboard", () => {
  it('creates, searches, pages, opens a tenant, adds and removes members, and deletes it', async () => {
    const owner = { email: 'barbara@example.com', password: 'liskov-substitution-1', name: 'Barbara Liskov' }
    const platform = await signUpUser(server, owner)
    const ws = await activeWorkspace(server.core, platform.id)
    const ada = await signUp(server.core, ws, {
      email: 'ada@example.com',
      password: 'a long password 1',
      name: 'Ada',
    })
    const bob = await signUp(server.core, ws, {
      email: 'bob@example.com',
      password: 'a long password 1',
      name: 'Bob',
    })
    const tenantsUrl = `${server.baseUrl}/app/workspaces/${ws}/tenants`

    const { context, page, errors } = await signedInPage(server.baseUrl, owner)
    const problems = await collectConsoleErrors(page)
    const tenantCount = () => page.locator('#tenant-count').textContent()
    const memberCount = () => page.locator('#tenant-member-count').textContent()

    // From the workspace page to its tenants.
    await page.goto(`${server.baseUrl}/app/workspaces/${ws}`)
    await page.getByRole('link', { name: 'Tenants', exact: true }).click()
    await page.waitForURL(tenantsUrl)
    await page.getByText('No tenants yet.').waitFor()
    expect(await tenantCount()).toBe('0 tenants')

    // The model's rules at their fields (the browser's own checks off, as a script would send).
    await page.evaluate(() => document.querySelector('#tenant-form')?.setAttribute('novalidate', ''))
    await page.getByLabel('Name').fill('Acme Inc.')
    await page.getByLabel(/^Slug/).fill('Acme')
    await page.getByRole('button', { name: 'Create tenant' }).click()
    await page.locator('#tenant-slug-error', { hasText: 'lower-case letters' }).waitFor()
    await settled(page)
    expect(await page.getByLabel(/^Slug/).inputValue()).toBe('Acme')
    await page.getByLabel(/^Slug/).fill('acme')
    await page.getByLabel(/^Metadata/).fill('[1, 2]')
    await page.getByRole('button', { name: 'Create tenant' }).click()
    await page.locator('#tenant-metadata-error', { hasText: 'JSON object' }).waitFor()
    await settled(page)

    await page.getByLabel(/^Metadata/).fill('{"plan": "gold"}')
    await page.getByRole('button', { name: 'Create tenant' }).click()
    await page.getByText('Tenant Acme Inc. created.').waitFor()
    await settled(page)
    await page.locator('#tenant-rows tr', { hasText: 'acme' }).waitFor()
    expect(await page.getByText('No tenants yet.').isVisible()).toBe(false)
    expect(await page.getByLabel('Name').inputValue()).toBe('')
    expect(await tenantCount()).toBe('1 tenant')

    // A slug the workspace has is refused at its field, the values kept.
    await page.getByLabel('Name').fill('Another Acme')
    await page.getByLabel(/^Slug/).fill('acme')
    await page.getByRole('button', { name: 'Create tenant' }).click()
    await page.locator('#tenant-slug-error', { hasText: 'already exists' }).waitFor()
    await settled(page)
    expect(await page.getByLabel('Name').inputValue()).toBe('Another Acme')
    expect(await tenantCount()).toBe('1 tenant')

    // Enough tenants for a second page (50 a page), through the batch API; then a search.
    const more = Array.from({ length: 50 }, (_, i) => ({
      slug: `t-${String(i).padStart(2, '0')}`,
      name: `Globex ${i}`,
    }))
    expect(
      (await json(platform.agent, 'POST', `/v1/workspaces/${ws}/tenants:batch`, more)).body.created,
    ).toBe(50)
    await page.reload()
    expect(await page.locator('#tenant-count').textContent()).toBe('51 tenants')
    await expect(page.locator('#tenant-rows tr').count()).resolves.toBe(50)
    await page.getByRole('link', { name: 'Next page' }).click()
    await page.waitForURL(/cursor=/)
    await expect(page.locator('#tenant-rows tr').count()).resolves.toBe(1)
    await page.getByRole('link', { name: 'First page' }).click()
    await page.getByLabel('Search').fill('ACM')
    await page.getByRole('button', { name: 'Search' }).click()
    await page.waitForURL(/q=ACM/)
    expect(await page.locator('#tenant-count').textContent()).toBe('1 tenant found')
    // Created under the search: a tenant it does not find stays out of the table, and the count says so.
    await page.getByLabel('Name').fill('Initech')
    await page.getByLabel(/^Slug/).fill('initech')
    await page.getByRole('button', { name: 'Create tenant' }).click()
    await page.getByText('Tenant Initech created.').waitFor()
    await settled(page)
    await expect(page.locator('#tenant-rows tr').count()).resolves.toBe(1)
    expect(await tenantCount()).toBe('1 tenant found (1 added, hidden by this search)')

    // The tenant's page: its facts, no members yet.
    await page.getByRole('link', { name: 'Acme Inc.' }).click()
    await page.getByRole('heading', { name: 'Acme Inc.' }).waitFor()
    await page.getByText('"plan": "gold"').waitFor()
    await page.getByText('No members yet.').waitFor()
    expect(await memberCount()).toBe('0 members')

    // Members by email (any case) and by id; an unknown one and a repeat are refused at the field.
    await page.getByLabel('Email or user id').fill('ADA@example.com')
    await page.getByRole('button', { name: 'Add member' }).click()
    await page.getByText('ada@example.com is now a member.').waitFor()
    await settled(page)
    expect(await memberCount()).toBe('1 member')
    await page.getByLabel('Email or user id').fill(bob.id)
    await page.getByRole('button', { name: 'Add member' }).click()
    await page.getByText('bob@example.com is now a member.').waitFor()
    await settled(page)
    await expect(page.locator('#tenant-member-rows tr').count()).resolves.toBe(2)
    expect(await memberCount()).toBe('2 members')
    await page.getByLabel('Email or user id').fill('nobody@example.com')
    await page.getByRole('button', { name: 'Add member' }).click()
    await page
      .locator('#tenant-member-user-error', { hasText: 'No user of this workspace has this email' })
      .waitFor()
    await settled(page)
    await page.getByLabel('Email or user id').fill(ada.id)
    await page.getByRole('button', { name: 'Add member' }).click()
    await page.locator('#tenant-member-user-error', { hasText: 'already a member' }).waitFor()
    await settled(page)

    // Remove asks first: dismissed, the row stays; confirmed, it goes.
    const adaRow = page.locator('#tenant-member-rows tr', { hasText: 'ada@example.com' })
    page.once('dialog', (d) => d.dismiss())
    await page.getByRole('button', { name: 'Remove Ada' }).click()
    await Bun.sleep(300)
    await expect(adaRow.count()).resolves.toBe(1)
    let asked = ''
    page.once('dialog', (d) => {
      asked = d.message()
      void d.accept()
    })
    await page.getByRole('button', { name: 'Remove Ada' }).click()
    await adaRow.waitFor({ state: 'detached' })
    expect(asked).toBe('Remove Ada from this tenant?')
    expect(await memberCount()).toBe('1 member')
    await page.reload()
    await expect(page.locator('#tenant-member-rows tr').count()).resolves.toBe(1)
    const acme = (await json(platform.agent, 'GET', `/v1/workspaces/${ws}/tenants?q=acme`)).body.items[0]
    const members = await json(platform.agent, 'GET', `/v1/workspaces/${ws}/tenants/${acme.id}/members`)
    expect(members.body.items.map((m: { email: string }) => m.email)).toEqual(['bob@example.com'])
    // The last member gone, the table says it has none, without a reload.
    page.once('dialog', (d) => void d.accept())
    await page.getByRole('button', { name: 'Remove Bob' }).click()
    await page
      .locator('#tenant-member-rows tr', { hasText: 'bob@example.com' })
      .waitFor({ state: 'detached' })
    expect(await memberCount()).toBe('0 members')
    expect(await page.getByText('No members yet.').isVisible()).toBe(true)

    // Deleting the tenant asks first, then lands on the list without it.
    page.once('dialog', (d) => void d.accept())
    await page.getByRole('button', { name: 'Delete tenant' }).click()
    await page.waitForURL(tenantsUrl)
    expect(await page.locator('#tenant-count').textContent()).toBe('51 tenants')
    expect((await json(platform.agent, 'GET', `/v1/workspaces/${ws}/tenants/${acme.id}`)).status).toBe(404)

    expect(errors).toEqual([])
    expect(besidesRefusals(await problems(), [404, 409, 422])).toEqual([])
    await context.close()
  }, 90_000)
})
