// legs: once — pages in Chromium; the services behind them are tested on both stores by the API tests
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Page } from 'playwright-core'
import { workspaceMembers } from '../src/features/workspaces/schema'
import { acceptConfirmations, settled, sharedBrowser } from './support/browser'
import { activeWorkspace } from './support/instances'
import { exchangeForm, type KeyFile, signAssertion } from './support/machine-keys'
import { startTestServer, type TestServer } from './support/server'
import { type Json, json, type PlatformUser, signUpUser } from './support/users'

// Issue 25, items 3 and 4 in headless Chromium: Settings → Machine keys. An owner creates a key and
// sees its key file once (which then exchanges at POST /v1/auth/token), a reload shows the key but no
// secret, a past expiry is refused at its field, Rotate shows a new key file and marks the old key
// rotating, Revoke removes the row and the key's exchange is refused; a viewer sees the list only.
// The cases build on each other, in file order, on one server and one browser.

const DAY = 24 * 3_600_000
const PEM = /^-----BEGIN PRIVATE KEY-----\n[A-Za-z0-9+/=\n]+\n-----END PRIVATE KEY-----\n?$/

const ownerUser = { email: 'alan@example.com', password: 'universal-machine-1936', name: 'Alan Turing' }
const viewerUser = { email: 'joan@example.com', password: 'hut-eight-banburismus', name: 'Joan Clarke' }

let server: TestServer
let owner: PlatformUser
let ws: string
let keysUrl: string
let page: Page
// Launched as the file loads: sharedBrowser's afterAll (which closes it) then belongs to the file,
// not to the hook or case that first asked for it (bun runs such a hook when that scope ends).
const browser = await sharedBrowser()
const pageErrors: string[] = []
/** Every confirmation the owner's page asked, accepted. */
const confirmations: string[] = []
/** The key files the page showed, in order: the created key, then its rotation's. */
const files: KeyFile[] = []

/** Signs a platform user in to the dashboard through the hosted sign-in page, in a new context. */
async function signedIn(user: { email: string; password: string }) {
  const ctx = await browser.newContext()
  const p = await ctx.newPage()
  p.on('pageerror', (e) => pageErrors.push(e.message))
  await p.goto(`${server.baseUrl}/v1/auth/login`)
  await p.getByLabel('Email').fill(user.email)
  await p.getByLabel('Password').fill(user.password)
  await p.getByRole('button', { name: 'Sign in' }).click()
  await p.waitForURL(`${server.baseUrl}/app/`)
  return { ctx, p }
}

/** The key file shown on the page, parsed from `#key-file`. */
async function shownKeyFile(): Promise<KeyFile> {
  const text = await page.locator('#key-file').textContent()
  return JSON.parse(text ?? '') as KeyFile
}

/** The exchange, as a key holder makes it: a fresh ES256 assertion signed with the key file. */
async function exchange(file: KeyFile): Promise<{ status: number; body: Json }> {
  const res = await fetch(file.token_url, { method: 'POST', body: exchangeForm(await signAssertion(file)) })
  return { status: res.status, body: await res.json() }
}

const row = (p: Page, keyId: string) => p.locator(`#key-${keyId}`)
const listed = async () => (await json(owner.agent, 'GET', `/v1/workspaces/${ws}/machine-keys`)).body

beforeAll(async () => {
  server = await startTestServer()
  owner = await signUpUser(server, ownerUser)
  ws = await activeWorkspace(server.core, owner.id)
  keysUrl = `${server.baseUrl}/app/workspaces/${ws}/settings/machine-keys`
})
// The browser (and with it every context) closes after the file, by sharedBrowser's own hook.
afterAll(() => server?.stop())

describe('Settings → Machine keys in the dashboard', () => {
  it('is linked from the workspace settings and starts empty', async () => {
    page = (await signedIn(ownerUser)).p
    acceptConfirmations(page, confirmations)
    await page.goto(`${server.baseUrl}/app/workspaces/${ws}/settings`)
    await page.getByRole('link', { name: 'Machine keys' }).click()
    await page.waitForURL(keysUrl)
    await page.getByRole('heading', { name: 'Machine keys', level: 1 }).waitFor()
    await page.getByText('No machine keys yet').waitFor()
    await expect(page.locator('#key-create').count()).resolves.toBe(1)
    // The name field is styled as the form's other fields (a text input), as wide as the select.
    const name = await page.getByLabel('Name').boundingBox()
    const access = await page.getByLabel('Access').boundingBox()
    expect(name?.width).toBe(access!.width)
  })

  it('creates a key and shows its key file once, which exchanges for an access token', async () => {
    await page.getByLabel('Name').fill('ci-deploy')
    await page.getByLabel('Access').selectOption('workspace:write')
    expect(await page.getByLabel(/^Valid through/).inputValue()).toBe('')
    const posted = page.waitForResponse((r) => r.request().method() === 'POST' && r.url() === keysUrl)
    await page.getByRole('button', { name: 'Create key' }).click()
    expect((await posted).status()).toBe(200)
    await page.locator('#key-file').waitFor()
    await settled(page)
    await page.screenshot({ path: '/tmp/machine-keys.png', fullPage: true })

    const file = await shownKeyFile()
    files.push(file)
    expect(file).toEqual({
      type: 'service_account',
      key_id: expect.stringMatching(/^mk_[0-9A-Z]{26}$/),
      key_secret: expect.stringMatching(PEM),
      workspace_id: ws,
      token_url: `${server.baseUrl}/v1/auth/token`,
    })
    await page.getByRole('heading', { name: 'Key file of ci-deploy' }).waitFor()
    // The download carries the same file.
    const href = await page.getByRole('link', { name: 'Download key file' }).getAttribute('href')
    expect(href).toStartWith('data:application/json;base64,')
    expect(JSON.parse(Buffer.from(href!.split(',')[1]!, 'base64').toString())).toEqual(file)

    // The table has the new key, as the API lists it; the form is empty again.
    const created = row(page, file.key_id)
    expect(await created.locator('.badge').textContent()).toBe('active')
    expect(await created.textContent()).toContain('workspace:write')
    expect(await page.getByLabel('Name').inputValue()).toBe('')
    expect((await listed()).items).toMatchObject([
      { id: file.key_id, name: 'ci-deploy', scopes: ['workspace:write'], expires_at: null, status: 'active' },
    ])

    const token = await exchange(file)
    expect(token.status).toBe(200)
    expect(token.body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 900,
      scope: 'workspace:write',
    })
    const me = await fetch(`${server.baseUrl}/v1/auth/me`, {
      headers: { authorization: `Bearer ${token.body.access_token}` },
    })
    expect(await me.json()).toMatchObject({ kind: 'machine_key', id: file.key_id, workspace_id: ws })
  })

  it('after a reload lists the key but shows its secret nowhere', async () => {
    const [file] = files
    const res = await page.reload()
    const served = await res!.text()
    const html = await page.content()
    await row(page, file!.key_id).waitFor()
    expect(await row(page, file!.key_id).textContent()).toContain('ci-deploy')
    await expect(page.locator('#key-file').count()).resolves.toBe(0)
    // Any line of the PEM's body would betray it.
    const secretLines = file!.key_secret.split('\n').filter((l) => l && !l.startsWith('-----'))
    expect(secretLines.length).toBeGreaterThan(0)
    for (const text of [served, html]) {
      expect(text).toContain(file!.key_id)
      expect(text).not.toContain('PRIVATE KEY')
      for (const line of secretLines) expect(text).not.toContain(line)
    }
  })

  it('refuses a past expiry next to the field (422), keeping what was typed', async () => {
    const yesterday = new Date(Date.now() - DAY).toISOString().slice(0, 10)
    await page.getByLabel('Name').fill('nightly-report')
    await page.getByLabel('Access').selectOption('workspace:read')
    await page.getByLabel(/^Valid through/).fill(yesterday)
    const posted = page.waitForResponse((r) => r.request().method() === 'POST' && r.url() === keysUrl)
    await page.getByRole('button', { name: 'Create key' }).click()
    expect((await posted).status()).toBe(422)
    await page.locator('#key-expires-error').waitFor()
    await settled(page)
    expect(await page.locator('#key-expires-error').textContent()).toBe(
      'Choose an expiry in the future, or none.',
    )
    // The message sits right after its field.
    expect(
      await page.locator('#key-expires-error').evaluate((e) => e.previousElementSibling?.id ?? null),
    ).toBe('key-expires')
    expect(await page.getByLabel('Name').inputValue()).toBe('nightly-report')
    expect(await page.getByLabel(/^Valid through/).inputValue()).toBe(yesterday)
    expect(await page.getByLabel('Access').inputValue()).toBe('workspace:read')
    await expect(page.locator('#key-name-error').count()).resolves.toBe(0)
    await expect(page.locator('#key-file').count()).resolves.toBe(0)
    expect((await listed()).total).toBe(1)
  })

  it('rotates after a confirmation: a new key file, and the old key rotating', async () => {
    const [old] = files
    const asked = confirmations.length
    await row(page, old!.key_id).getByRole('button', { name: 'Rotate' }).click()
    await page.locator('#key-file').waitFor()
    await settled(page)
    expect(confirmations.slice(asked)).toEqual([
      'Rotate ci-deploy? You get a new key file now; the old key keeps working for 24 hours.',
    ])

    const fresh = await shownKeyFile()
    files.push(fresh)
    expect(fresh.key_id).toMatch(/^mk_[0-9A-Z]{26}$/)
    expect(fresh.key_id).not.toBe(old!.key_id)
    expect(fresh.key_secret).toMatch(PEM)
    expect(fresh.key_secret).not.toBe(old!.key_secret)
    expect(fresh.workspace_id).toBe(ws)

    expect(await row(page, old!.key_id).locator('.badge').textContent()).toBe('rotating')
    expect(await row(page, fresh.key_id).locator('.badge').textContent()).toBe('active')
    // A rotating key is not rotated again; it can still be revoked.
    await expect(row(page, old!.key_id).getByRole('button', { name: 'Rotate' }).count()).resolves.toBe(0)
    await expect(row(page, old!.key_id).getByRole('button', { name: 'Revoke' }).count()).resolves.toBe(1)
    const byId = new Map(((await listed()).items as Json[]).map((k) => [k.id, k]))
    expect(byId.get(old!.key_id)).toMatchObject({ status: 'rotating', revokes_at: expect.any(String) })
    expect(byId.get(fresh.key_id)).toMatchObject({ status: 'active', name: 'ci-deploy' })

    // Both work during the grace.
    expect((await exchange(old!)).status).toBe(200)
    expect((await exchange(fresh)).status).toBe(200)
  })

  it('revokes after a confirmation: the row goes and the key exchanges no more', async () => {
    const [old, fresh] = files
    const asked = confirmations.length
    await row(page, old!.key_id).getByRole('button', { name: 'Revoke' }).click()
    await row(page, old!.key_id).waitFor({ state: 'detached' })
    expect(confirmations.slice(asked)).toEqual([
      'Revoke ci-deploy? It stops working at once; tokens it issued end within 15 minutes.',
    ])
    await row(page, fresh!.key_id).waitFor()

    const refused = await exchange(old!)
    expect(refused.status).toBe(400)
    expect(refused.body.error).toBe('invalid_grant')
    expect(refused.body.error_description).toStartWith('This key was revoked at ')
    expect((await exchange(fresh!)).status).toBe(200)

    await page.reload()
    await expect(page.locator('#key-rows tr').count()).resolves.toBe(1)
    await expect(row(page, old!.key_id).count()).resolves.toBe(0)
    expect(((await listed()).items as Json[]).map((k) => k.id)).toEqual([fresh!.key_id])
  })

  it('shows a viewer the keys without the create form or any Rotate and Revoke button', async () => {
    const [, fresh] = files
    const viewer = await signUpUser(server, viewerUser)
    const now = server.core.clock.now()
    await server.core.db
      .insert(workspaceMembers)
      .values({ workspaceId: ws, accountId: viewer.id, role: 'viewer', createdAt: now, updatedAt: now })
    const { ctx, p } = await signedIn(viewerUser)
    try {
      const res = await p.goto(keysUrl)
      expect(res!.status()).toBe(200)
      await row(p, fresh!.key_id).waitFor()
      await expect(p.locator('#key-rows tr').count()).resolves.toBe(1)
      expect(await row(p, fresh!.key_id).locator('.badge').textContent()).toBe('active')
      await expect(p.locator('#key-create').count()).resolves.toBe(0)
      await expect(p.getByRole('button', { name: 'Create key' }).count()).resolves.toBe(0)
      await expect(p.getByRole('button', { name: /Rotate|Revoke/ }).count()).resolves.toBe(0)
      await expect(p.locator('[hx-post], [hx-delete]').count()).resolves.toBe(0)
    } finally {
      await ctx.close()
    }
    expect(pageErrors).toEqual([])
  })

  it('says the list is empty again once its last key is revoked, without a reload', async () => {
    const [, fresh] = files
    await row(page, fresh!.key_id).getByRole('button', { name: 'Revoke' }).click()
    await row(page, fresh!.key_id).waitFor({ state: 'detached' })
    expect(await page.getByText('No machine keys yet').isVisible()).toBe(true)
    expect(pageErrors).toEqual([])
  })
})
