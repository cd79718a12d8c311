// legs: once — pages in Chromium; the services behind them are tested on both stores by the API tests
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { claimCell, signedInPage } from './support/browser'
import { activeWorkspace, registerApp } from './support/instances'
import { startTestServer, type TestServer } from './support/server'
import { json, type PlatformUser, signUpUser } from './support/users'

// Issue 57 item 4 in headless Chromium: "Try sign-in" on the workspace page goes to the workspace's
// own (branded) sign-in page, and a sign-up there comes back to the dashboard's page of claims; the
// apps list offers the same button on each row. No script error and no console error on the way.

const ownerUser = { email: 'ada@example.com', password: 'analytical-engine', name: 'Ada' }
const endUser = { email: 'grace@example.com', password: 'cobol-compiler-1959', name: 'Grace Hopper' }

let server: TestServer
let owner: PlatformUser
let ws: string

beforeAll(async () => {
  server = await startTestServer()
  owner = await signUpUser(server, ownerUser)
  ws = await activeWorkspace(server.core, owner.id)
  const branded = await json(owner.agent, 'PATCH', `/v1/workspaces/${ws}/branding`, {
    display_name: 'Acme Rockets',
  })
  expect(branded.status).toBe(200)
  await registerApp(server.core, ws, { type: 'spa', redirectUris: ['https://rp.example.com/cb'] })
})
afterAll(() => server?.stop())

describe('Try sign-in in the dashboard', () => {
  it('signs an end user up at the branded hosted pages from the workspace page and shows the claims', async () => {
    const { context, page, errors } = await signedInPage(server.baseUrl, ownerUser)
    const consoleErrors: string[] = []
    page.on('console', (m) => {
      // Chromium asks every origin for /favicon.ico, which none of our pages names (a 404).
      if (m.type() === 'error' && !m.location().url.endsWith('/favicon.ico')) consoleErrors.push(m.text())
    })
    try {
      await page.goto(`${server.baseUrl}/app/workspaces/${ws}`)
      await page.getByRole('button', { name: 'Try sign-in' }).click()
      await page.waitForURL((u) => u.pathname.startsWith(`/i/${ws}/interaction/`))
      await page.getByText('Acme Rockets').first().waitFor()
      await page.getByRole('link', { name: 'Create an account' }).click()
      await page.getByLabel('Name').fill(endUser.name)
      await page.getByLabel('Email').fill(endUser.email)
      await page.getByLabel('Password').fill(endUser.password)
      await page.getByRole('button', { name: 'Create account' }).click()
      await page.waitForURL((u) => u.pathname === `/app/workspaces/${ws}/try/callback`)

      await page.getByRole('heading', { name: 'Try sign-in: signed in', level: 1 }).waitFor()
      const claim = (name: string) => claimCell(page, name)
      await expect(claim('email').textContent()).resolves.toBe(endUser.email)
      await expect(claim('aud').textContent()).resolves.toBe(`gatehouse-try-${ws}`)
      await expect(claim('iss').textContent()).resolves.toBe(`${server.baseUrl}/i/${ws}`)
      await expect(claim('amr').textContent()).resolves.toBe('["pwd"]')
      await expect(page.locator('#try-amr').textContent()).resolves.toContain('pwd: password')
      await expect(page.locator('#try-userinfo-json').textContent()).resolves.toContain(endUser.email)

      // "Try again" starts over: the sign-in page asks again (prompt=login).
      await page.getByRole('button', { name: 'Try again' }).click()
      await page.waitForURL((u) => u.pathname.startsWith(`/i/${ws}/interaction/`))
      await page.getByRole('heading', { name: 'Sign in' }).waitFor()

      // The apps list offers it on each row.
      await page.goto(`${server.baseUrl}/app/workspaces/${ws}/apps`)
      await expect(
        page.locator('#app-rows tr').first().getByRole('button', { name: 'Try sign-in' }).count(),
      ).resolves.toBe(1)
      expect(errors).toEqual([])
      expect(consoleErrors).toEqual([])
    } finally {
      await context.close()
    }
  })
})
