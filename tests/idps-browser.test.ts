// legs: once — pages in Chromium; the services behind them are tested on both stores by the API tests
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { BrowserContext, Page } from 'playwright-core'
import { workspaceMembers } from '../src/features/workspaces/schema'
import { acceptConfirmations, settled, sharedBrowser, signedInPage } from './support/browser'
import { activeWorkspace } from './support/instances'
import { startTestServer, type TestServer } from './support/server'
import { type Json, json, type PlatformUser, signUpUser } from './support/users'

// Issue 29 in headless Chromium: Settings → Identity providers. An owner finds the page empty, adds
// a GitHub IdP and copies the redirect URI it shows, is refused an OpenID Connect IdP's bad issuer
// next to the field (the name kept, the secret not), adds it with a good one, finds the issuer field
// gone and unsent for another type, and deletes an IdP after a confirmation; a viewer reads the list
// but gets no form, no delete button, and a 403 on both writes. The cases build on each other, in
// file order, on one server and one browser.

const ownerUser = {
  email: 'margaret@example.com',
  password: 'apollo-guidance-1969',
  name: 'Margaret Hamilton',
}
const viewerUser = {
  email: 'katherine@example.com',
  password: 'orbital-mechanics-1962',
  name: 'Katherine Johnson',
}
const GITHUB_SECRET = 'gh-secret-value-0f1e2d'
const OIDC_SECRET = 'acme-secret-value-3c4b5a'

// Launched as the file loads: sharedBrowser's afterAll (which closes it) then belongs to the file.
await sharedBrowser()
let server: TestServer
let owner: PlatformUser
let ws: string
let idpsUrl: string
let context: BrowserContext
let page: Page
let errors: string[] = []
/** Every confirmation the owner's page asked, accepted. */
const confirmations: string[] = []
const ids = { github: '', oidc: '', microsoft: '' }

const listed = async () => (await json(owner.agent, 'GET', `/v1/workspaces/${ws}/idps`)).body
const row = (id: string) => page.locator(`#idp-${id}`)
const redirectOf = (_id: string) => `${server.baseUrl}/i/${ws}/broker/callback`

/** Sends the create form and waits for its answer to be swapped in and settled. */
async function add(): Promise<number> {
  const posted = page.waitForResponse((r) => r.request().method() === 'POST' && r.url() === idpsUrl)
  await page.getByRole('button', { name: 'Add identity provider' }).click()
  const status = (await posted).status()
  await settled(page)
  return status
}

/** A new platform user, a member of the workspace with `role`. */
async function member(user: typeof viewerUser, role: 'viewer' | 'developer'): Promise<PlatformUser> {
  const signedUp = await signUpUser(server, user)
  const now = server.core.clock.now()
  await server.core.db
    .insert(workspaceMembers)
    .values({ workspaceId: ws, accountId: signedUp.id, role, createdAt: now, updatedAt: now })
  return signedUp
}

beforeAll(async () => {
  server = await startTestServer()
  owner = await signUpUser(server, ownerUser)
  ws = await activeWorkspace(server.core, owner.id)
  idpsUrl = `${server.baseUrl}/app/workspaces/${ws}/settings/idps`
})
// The browser (and with it every context) closes after the file, by sharedBrowser's own hook.
afterAll(() => server?.stop())

describe('Settings → Identity providers in the dashboard', () => {
  it('is linked from the workspace settings and starts empty, the issuer asked of OpenID Connect alone', async () => {
    const signed = await signedInPage(server.baseUrl, ownerUser)
    ;({ context, page, errors } = signed)
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.baseUrl })
    acceptConfirmations(page, confirmations)
    await page.goto(`${server.baseUrl}/app/workspaces/${ws}/settings`)
    await page.getByRole('link', { name: 'Identity providers' }).click()
    await page.waitForURL(idpsUrl)
    await page.getByRole('heading', { name: 'Identity providers', level: 1 }).waitFor()
    await page.getByText('No identity providers yet').waitFor()
    // The redirect URI is the workspace's, known before any IdP: registered at the provider first.
    expect(await page.getByLabel('Redirect URI to register').inputValue()).toBe(
      `${server.baseUrl}/i/${ws}/broker/callback`,
    )

    const provider = page.getByLabel('Provider')
    expect(await provider.locator('option').allTextContents()).toEqual([
      'Google',
      'GitHub',
      'Microsoft',
      'OpenID Connect',
    ])
    expect(await page.getByLabel('Client secret').getAttribute('type')).toBe('password')
    expect(await page.locator('#idp-issuer-field').isHidden()).toBe(true)
    await provider.selectOption('oidc')
    await page.getByLabel('Issuer URL').waitFor()
    await provider.selectOption('github')
    await page.getByLabel('Issuer URL').waitFor({ state: 'hidden' })
  })

  it('adds a GitHub IdP, lists it with its redirect URI, and Copy copies that URI', async () => {
    await page.getByLabel('Client ID').fill('Iv1.gatehouse-dev')
    await page.getByLabel('Client secret').fill(GITHUB_SECRET)
    expect(await add()).toBe(200)

    const body = await listed()
    expect(body.items).toMatchObject([{ type: 'github', name: 'GitHub', client_id: 'Iv1.gatehouse-dev' }])
    ids.github = body.items[0].id as string
    const uri = redirectOf(ids.github)
    expect(body.items[0].redirect_uri).toBe(uri)

    // Said once, where to register it.
    const created = page.locator('#idp-created')
    expect(await created.getByRole('heading').textContent()).toBe('GitHub is added')
    expect(await created.textContent()).toContain('Register this redirect URI at GitHub')
    expect(await created.textContent()).toContain('Authorization callback URL')
    expect(await page.locator('#idp-created-redirect').inputValue()).toBe(uri)

    const listedRow = row(ids.github)
    expect(await listedRow.locator('.idp-name').textContent()).toBe('GitHub')
    expect(await listedRow.locator('.idp-mark.github').textContent()).toBe('GH')
    expect(await listedRow.locator('.idp-client-id').textContent()).toBe('Iv1.gatehouse-dev')
    await expect(listedRow.locator('.idp-issuer').count()).resolves.toBe(0)
    const field = listedRow.locator(`#idp-${ids.github}-redirect`)
    expect(await field.inputValue()).toBe(uri)
    expect(uri).toEndWith(`/i/${ws}/broker/callback`)
    expect(await field.getAttribute('readonly')).not.toBeNull()

    await listedRow.getByRole('button', { name: 'Copy' }).click()
    await listedRow.getByRole('button', { name: 'Copied' }).waitFor()
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(uri)

    // The form is empty again, and the secret is nowhere on the page.
    expect(await page.getByLabel('Client ID').inputValue()).toBe('')
    expect(await page.getByLabel('Client secret').inputValue()).toBe('')
    expect(await page.content()).not.toContain(GITHUB_SECRET)
  })

  it("refuses an OpenID Connect IdP's bad or missing issuer next to the field, keeping what was typed but the secret", async () => {
    await page.getByLabel('Provider').selectOption('oidc')
    await page.getByLabel('Issuer URL').fill('ftp://x')
    await page.getByLabel('Name on the sign-in button (optional)').fill('Acme <SSO>')
    await page.getByLabel('Client ID').fill('acme-client')
    await page.getByLabel('Client secret').fill(OIDC_SECRET)
    await page.getByLabel('Scopes (optional)').fill('openid  email openid')
    expect(await add()).toBe(422)
    expect(await page.locator('#idp-issuer-error').textContent()).toBe('Use an https:// URL.')
    expect(await page.locator('#idp-create .alert.error').textContent()).toBe('Some fields need attention.')
    expect(await page.getByLabel('Provider').inputValue()).toBe('oidc')
    expect(await page.getByLabel('Issuer URL').inputValue()).toBe('ftp://x')
    expect(await page.getByLabel('Name on the sign-in button (optional)').inputValue()).toBe('Acme <SSO>')
    expect(await page.getByLabel('Client ID').inputValue()).toBe('acme-client')
    expect(await page.getByLabel('Scopes (optional)').inputValue()).toBe('openid  email openid')
    expect(await page.getByLabel('Client secret').inputValue()).toBe('')
    expect(await page.content()).not.toContain(OIDC_SECRET)

    // No issuer at all: the service's own rule, at the same field.
    await page.getByLabel('Issuer URL').fill('')
    await page.getByLabel('Client secret').fill(OIDC_SECRET)
    expect(await add()).toBe(422)
    expect(await page.locator('#idp-issuer-error').textContent()).toBe(
      'An oidc identity provider needs its issuer URL.',
    )
    expect(await page.getByLabel('Name on the sign-in button (optional)').inputValue()).toBe('Acme <SSO>')
    expect((await listed()).total).toBe(1)
  })

  it('adds it with a good issuer: the name shown as text, the issuer listed, the scopes as typed', async () => {
    await page.getByLabel('Issuer URL').fill('https://login.acme.example/')
    await page.getByLabel('Client secret').fill(OIDC_SECRET)
    expect(await add()).toBe(200)
    const oidc = (await listed()).items.find((i: Json) => i.type === 'oidc')
    expect(oidc).toMatchObject({
      name: 'Acme <SSO>',
      issuer: 'https://login.acme.example',
      scopes: ['openid', 'email'],
    })
    ids.oidc = oidc.id
    const listedRow = row(ids.oidc)
    expect(await listedRow.locator('.idp-name').textContent()).toBe('Acme <SSO>')
    await expect(listedRow.locator('sso').count()).resolves.toBe(0)
    expect(await listedRow.locator('.idp-issuer code').textContent()).toBe('https://login.acme.example')
    expect(await listedRow.locator(`#idp-${ids.oidc}-redirect`).inputValue()).toBe(redirectOf(ids.oidc))
  })

  it('hides the issuer for another type and does not send it; an owner may trust its second step', async () => {
    await page.getByLabel('Provider').selectOption('oidc')
    await page.getByLabel('Issuer URL').fill('https://login.example.com')
    await page.getByLabel('Provider').selectOption('microsoft')
    await page.getByLabel('Issuer URL').waitFor({ state: 'hidden' })
    await page.getByLabel('Client ID').fill('ms-client')
    await page.getByLabel('Client secret').fill('ms-secret-value')
    // Each trust says what it risks, beside its box.
    expect(await page.locator('#idp-create').textContent()).toContain(
      'whoever runs it can sign in as any user of this workspace',
    )
    await page.getByLabel('Trust its two-step verification').check()
    expect(await add()).toBe(200)
    const ms = (await listed()).items.find((i: Json) => i.type === 'microsoft')
    expect(ms).toMatchObject({
      name: 'Microsoft',
      client_id: 'ms-client',
      issuer: null,
      trust_email: false,
      trust_mfa: true,
    })
    ids.microsoft = ms.id
    expect(await row(ids.microsoft).locator('.idp-trust').textContent()).toBe(
      'Trusted: two-step verification',
    )
    expect(await page.getByLabel('Trust its two-step verification').isChecked()).toBe(false)
  })

  it('deletes an IdP after a confirmation: off the list and the API, the form left as typed', async () => {
    await page.getByLabel('Client ID').fill('being typed')
    const asked = confirmations.length
    const deleted = page.waitForResponse((r) => r.request().method() === 'DELETE')
    await row(ids.github)
      .getByRole('button', { name: /^Delete/ })
      .click()
    expect((await deleted).status()).toBe(200)
    await row(ids.github).waitFor({ state: 'detached' })
    await settled(page)
    expect(confirmations.slice(asked)).toEqual([
      "Delete GitHub? It leaves this workspace's sign-in page at once.",
    ])
    const left = await listed()
    expect(left.items.map((i: Json) => i.id)).toEqual([ids.microsoft, ids.oidc])
    await row(ids.oidc).waitFor()
    await row(ids.microsoft).waitFor()
    expect(await page.getByLabel('Client ID').inputValue()).toBe('being typed')
    expect(errors).toEqual([])
  })

  it('shows a viewer the list but no form and no delete button, and refuses them both writes', async () => {
    const viewer = await member(viewerUser, 'viewer')
    const signed = await signedInPage(server.baseUrl, viewerUser)
    try {
      const p = signed.page
      expect((await p.goto(idpsUrl))!.status()).toBe(200)
      await p.getByText('Identity providers are added and removed by members who can change').waitFor()
      await p.locator(`#idp-${ids.oidc}`).waitFor()
      expect(await p.locator(`#idp-${ids.oidc}-redirect`).inputValue()).toBe(redirectOf(ids.oidc))
      await expect(p.locator('#idp-create').count()).resolves.toBe(0)
      await expect(p.locator('[hx-post], [hx-delete]').count()).resolves.toBe(0)
      expect(signed.errors).toEqual([])
    } finally {
      await signed.context.close()
    }
    const form = { 'content-type': 'application/x-www-form-urlencoded', 'hx-request': 'true' }
    const path = `/app/workspaces/${ws}/settings/idps`
    const created = await json(viewer.agent, 'POST', path, 'type=github&client_id=x&client_secret=y', form)
    expect(created.status).toBe(403)
    expect((await json(viewer.agent, 'DELETE', `${path}/${ids.oidc}`, undefined, form)).status).toBe(403)
    expect((await listed()).total).toBe(2)
  })

  it('gives a developer the form without the trust boxes, and refuses them a trust sent anyway', async () => {
    const developerUser = { email: 'grace@example.com', password: 'compiler-a-0-1952', name: 'Grace' }
    const developer = await member(developerUser, 'developer')
    const signed = await signedInPage(server.baseUrl, developerUser)
    try {
      await signed.page.goto(idpsUrl)
      await signed.page.locator('#idp-create').waitFor()
      await expect(signed.page.locator('#idp-create input[type=checkbox]').count()).resolves.toBe(0)
    } finally {
      await signed.context.close()
    }
    const form = { 'content-type': 'application/x-www-form-urlencoded', 'hx-request': 'true' }
    const path = `/app/workspaces/${ws}/settings/idps`
    const body = 'type=github&client_id=x&client_secret=y'
    const trusted = await json(developer.agent, 'POST', path, `${body}&trust_email=true`, form)
    expect(trusted.status).toBe(403)
    expect((await json(developer.agent, 'POST', path, body, form)).status).toBe(200)
    expect((await listed()).items.map((i: Json) => i.trust_email)).toEqual([false, false, false])
  })
})
