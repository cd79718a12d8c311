// legs: once — pages in Chromium; the services behind them are tested on both stores by the API tests
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { readFile } from 'node:fs/promises'
import type { Page } from 'playwright-core'
import { ManualClock } from '../src/shared/clock'
import { signedInPage } from './support/browser'
import { activeWorkspace } from './support/instances'
import { startTestServer, type TestServer } from './support/server'
import { json, type PlatformUser, signUpUser } from './support/users'

// Issue 25, item 5 and item 2 in headless Chromium: Settings → Audit log lists the entries newest
// first, pages to older ones, narrows them with a filter (htmx, the URL kept shareable) and
// downloads the same selection as CSV; Settings → Delete workspace takes the workspace's name.

const clock = new ManualClock(Date.now())
let server: TestServer
let owner: PlatformUser
const ada = { email: 'ada@example.com', password: 'analytical-engine-1', name: 'Ada Lovelace' }

beforeAll(async () => {
  server = await startTestServer({}, undefined, { clock })
  owner = await signUpUser(server, ada)
})
afterAll(() => server.stop())

/** htmx wires what a swap brought in once it settled: a test waits as a person's reading would. */
const settled = (page: Page) =>
  page.waitForFunction(() => !document.querySelector('.htmx-added, .htmx-settling, .htmx-request'))

describe('Settings → Audit log in the dashboard', () => {
  it('lists the entries, pages to older ones, filters them and downloads the same as CSV', async () => {
    const ws = await activeWorkspace(server.core, owner.id)
    // 52 older entries, then what the owner does through the API, a second apart.
    const actor = { id: `user:${owner.id}`, ip: '192.0.2.1', userAgent: 'a script' }
    clock.advance(-3_600_000)
    await server.core.store.tx(async (tx) => {
      for (let i = 0; i < 52; i++)
        await server.core.audit(
          {
            workspaceId: ws,
            actor,
            action: 'member.role_changed',
            target: { type: 'member', id: `usr_${i}` },
            changes: { role: { from: 'viewer', to: 'developer' } },
          },
          { tx },
        )
    })
    clock.advance(3_600_000)
    for (const name of ['Shop', 'Blog', '<b>Admin</b>']) {
      clock.advance(1000)
      const app = await json(owner.agent, 'POST', `/v1/workspaces/${ws}/apps`, {
        name,
        app_type: 'spa',
        redirect_uris: ['https://rp.example.com/cb'],
      })
      expect(app.status).toBe(201)
    }
    clock.advance(1000)
    expect((await json(owner.agent, 'PATCH', `/v1/workspaces/${ws}`, { name: 'Acme Two' })).status).toBe(200)

    const { context, page, errors } = await signedInPage(server.baseUrl, ada)
    const logUrl = `${server.baseUrl}/app/workspaces/${ws}/settings/audit-log`
    await page.goto(`${server.baseUrl}/app/workspaces/${ws}/settings`)
    await page.getByRole('link', { name: 'Audit log' }).click()
    await page.waitForURL(logUrl)
    const rows = page.locator('#audit-rows tr')
    expect(await page.locator('#audit-count').textContent()).toBe('56 entries')
    expect(await rows.count()).toBe(50)
    // Newest first, with who did it by name and what changed.
    const newest = rows.first()
    expect(await newest.locator('td').nth(2).textContent()).toBe('workspace.renamed')
    expect(await newest.locator('td').nth(1).textContent()).toContain('Ada Lovelace')
    expect(await newest.textContent()).toContain('"Acme" → "Acme Two"')
    // A name is text, never markup.
    expect(await page.locator('#audit-rows b').count()).toBe(0)
    expect(await rows.nth(1).textContent()).toContain('"<b>Admin</b>"')

    await page.getByRole('link', { name: 'Older entries' }).click()
    await page.waitForURL(/cursor=/)
    await settled(page)
    expect(await rows.count()).toBe(6)
    expect(await page.getByRole('link', { name: 'Older entries' }).count()).toBe(0)
    await page.getByRole('link', { name: 'Newest entries' }).click()
    await page.waitForURL(logUrl)
    await settled(page)
    expect(await rows.count()).toBe(50)

    // A filter narrows the entries in place; the URL says what is shown. The action is a choice of
    // those the log holds, each family whole too.
    await page.getByLabel('Action').selectOption('app.*')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.locator('#audit-count', { hasText: '3 entries match' }).waitFor()
    await settled(page)
    expect(page.url()).toContain('action=app.*')
    expect(await rows.locator('td:nth-child(3)').allTextContents()).toEqual([
      'app.created',
      'app.created',
      'app.created',
    ])

    // The download carries the same selection.
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#audit-csv').click()])
    expect(download.suggestedFilename()).toBe(`audit-log-${ws}.csv`)
    const csv = await readFile((await download.path())!, 'utf8')
    const lines = csv.trimEnd().split('\r\n')
    expect(lines[0]).toBe('"id","at","actor","action","target_type","target_id","ip","user_agent","changes"')
    expect(lines).toHaveLength(4)
    expect(lines.slice(1).every((l) => l.includes(',"app.created","app",'))).toBe(true)
    expect(csv).toContain('<b>Admin</b>')

    // A filter the log cannot use says so, in place.
    await page.getByLabel('Since (UTC)').fill('last tuesday')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.getByText('Since: Use an ISO 8601 timestamp').waitFor()
    await page.getByLabel('Since (UTC)').fill('')
    await page.getByLabel('Action').selectOption('')
    await page.getByLabel('Actor').selectOption(`user:${owner.id}`)
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.locator('#audit-count', { hasText: '56 entries match' }).waitFor()

    expect(errors).toEqual([])
    await context.close()
  }, 60_000)
})

describe('Settings → Delete workspace in the dashboard', () => {
  it('takes the workspace name typed exactly, then leaves for the workspace list', async () => {
    const ws = await activeWorkspace(server.core, owner.id)
    const { context, page, errors } = await signedInPage(server.baseUrl, ada)
    await page.goto(`${server.baseUrl}/app/workspaces/${ws}/settings`)
    const confirm = page.getByLabel('Type Acme to confirm')
    await confirm.fill('acme')
    await page.getByRole('button', { name: 'Delete workspace' }).click()
    await page.locator('#ws-delete-confirm-error', { hasText: "Type the workspace's exact name" }).waitFor()
    await settled(page)
    expect((await json(owner.agent, 'GET', `/v1/workspaces/${ws}`)).body.state).toBe('active')

    await confirm.fill('Acme')
    await page.getByRole('button', { name: 'Delete workspace' }).click()
    await page.waitForURL(`${server.baseUrl}/app/workspaces`)
    await server.tick()
    expect((await json(owner.agent, 'GET', `/v1/workspaces/${ws}`)).status).toBe(404)
    expect(errors).toEqual([])
    await context.close()
  }, 60_000)
})
