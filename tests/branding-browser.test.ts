// legs: once — pages in Chromium; the services behind them are tested on both stores by the API tests
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdirSync } from 'node:fs'
import * as oidc from 'openid-client'
import type { Page } from 'playwright-core'
import { solidPng } from './support/branding'
import { acceptConfirmations, settled, sharedBrowser, signedInPage } from './support/browser'
import { activeWorkspace, publicClient } from './support/instances'
import { collectConsoleErrors } from './support/page-checks'
import { startTestServer, type TestServer } from './support/server'
import { json, type PlatformUser, signUpUser } from './support/users'

// Issue 30 in headless Chromium: Settings → Branding (the form with its live preview and contrast
// warning, inline refusals, the logo's upload with progress and its removal), then the workspace's
// hosted sign-in page as its users see it: the logo drawn, the colours applied (computed style), the
// name escaped, nothing refused by the page's policy. A screenshot of it is kept in test-artifacts/.
// The cases build on each other, in file order, on one server and one browser.

const ownerUser = { email: 'grace@example.com', password: 'compiler-a0-1952', name: 'Grace Hopper' }
const RP = 'https://rp.example.com'
const NAME = '<script>window.__branded = 1</script> Acme & Co'
const ARTIFACTS = new URL('../test-artifacts/', import.meta.url)

await sharedBrowser()
let server: TestServer
let owner: PlatformUser
let ws: string
let brandingUrl: string
let page: Page
let errors: string[] = []
/** The dashboard page's console errors and CSP violations, from the first visit to the last action. */
let dashboardProblems: () => Promise<string[]>
const confirmations: string[] = []

const rgb = (hex: string) =>
  `rgb(${[1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16)).join(', ')})`
const styleOf = (p: Page, selector: string, property: string) =>
  p
    .locator(selector)
    .first()
    .evaluate((el, prop) => getComputedStyle(el).getPropertyValue(prop), property)
const naturalWidth = (p: Page, selector: string) =>
  p.locator(selector).evaluate((img) => (img as HTMLImageElement).naturalWidth)

/** Sends a form by its button and waits for its answer to be swapped in and settled. */
async function send(button: string, path: string): Promise<number> {
  const posted = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith(path))
  await page.getByRole('button', { name: button }).click()
  const status = (await posted).status()
  await settled(page)
  return status
}

beforeAll(async () => {
  server = await startTestServer()
  owner = await signUpUser(server, ownerUser)
  ws = await activeWorkspace(server.core, owner.id)
  brandingUrl = `${server.baseUrl}/app/workspaces/${ws}/settings/branding`
})
afterAll(() => server?.stop())

describe('Settings → Branding in the dashboard', () => {
  it('is linked from the workspace settings and starts with the platform look, no warning', async () => {
    ;({ page, errors } = await signedInPage(server.baseUrl, ownerUser))
    dashboardProblems = await collectConsoleErrors(page)
    acceptConfirmations(page, confirmations)
    await page.goto(`${server.baseUrl}/app/workspaces/${ws}/settings`)
    await page.getByRole('link', { name: 'Branding' }).click()
    await page.waitForURL(brandingUrl)
    await page.getByRole('heading', { name: 'Branding' }).waitFor()
    expect(await page.getByLabel('Display name').inputValue()).toBe('')
    expect(await styleOf(page, '#branding-preview-button', 'background-color')).toBe(rgb('#4f46e5'))
    expect(await page.locator('#branding-contrast-primary').isVisible()).toBe(false)
    expect(await page.locator('#branding-logo-none').isVisible()).toBe(true)
  })

  it('previews the colours as they are typed and warns, live, when white text on the primary is below 4.5:1', async () => {
    await page.getByLabel('Primary colour', { exact: true }).fill('#ffee00')
    await page.locator('#branding-contrast-primary').waitFor({ state: 'visible' })
    expect(await page.locator('#branding-contrast-primary').textContent()).toContain('1.2')
    expect(await styleOf(page, '#branding-preview-button', 'background-color')).toBe(rgb('#ffee00'))
    await page.getByLabel('Background colour', { exact: true }).fill('#fdf6e3')
    expect(await styleOf(page, '#branding-preview', 'background-color')).toBe(rgb('#fdf6e3'))
    await page.getByLabel('Display name').fill('Preview name')
    expect(await page.locator('#branding-preview-name').textContent()).toBe('Preview name')
    await page.getByLabel('Primary colour', { exact: true }).fill('#0b5fff')
    await page.locator('#branding-contrast-primary').waitFor({ state: 'hidden' })
  })

  it('refuses a bad colour and an http link next to their fields, keeping what was typed (422)', async () => {
    await page.getByLabel('Text colour', { exact: true }).fill('blue')
    await page.getByLabel('Privacy policy URL').fill('http://acme.example/privacy')
    expect(await send('Save branding', '/settings/branding')).toBe(422)
    expect(await page.locator('#branding-text-color-error').textContent()).toBe(
      'Use a colour written #rrggbb, e.g. #4f46e5.',
    )
    expect(await page.locator('#branding-privacy-policy-url-error').textContent()).toBe(
      'Enter an https URL of at most 2000 characters.',
    )
    expect(await page.getByLabel('Display name').inputValue()).toBe('Preview name')
    expect((await json(owner.agent, 'GET', `/v1/workspaces/${ws}/branding`)).body.primary_color).toBeNull()
  })

  it('saves the branding', async () => {
    await page.getByLabel('Display name').fill(NAME)
    await page.getByLabel('Text colour', { exact: true }).fill('#222222')
    await page.getByLabel('Privacy policy URL').fill('https://acme.example/privacy')
    await page.getByLabel('Terms URL').fill('https://acme.example/terms')
    expect(await send('Save branding', '/settings/branding')).toBe(200)
    await page.getByText('Saved. The hosted pages show it now.').waitFor()
    expect((await json(owner.agent, 'GET', `/v1/workspaces/${ws}/branding`)).body).toMatchObject({
      display_name: NAME,
      primary_color: '#0b5fff',
      background_color: '#fdf6e3',
      text_color: '#222222',
    })
    // After the swap the preview still follows the saved values.
    expect(await styleOf(page, '#branding-preview-button', 'background-color')).toBe(rgb('#0b5fff'))
    expect(await page.locator('#branding-preview-name').textContent()).toBe(NAME)
  })

  it('draws the warning on the server too, for a primary saved through the API', async () => {
    await json(owner.agent, 'PATCH', `/v1/workspaces/${ws}/branding`, { primary_color: '#ffee00' })
    const html = await (await owner.agent.request(brandingUrl)).text()
    expect(html).toMatch(
      /<div class="alert warn" role="status" id="branding-contrast-primary"[^>]*>White button/,
    )
    expect(html).toMatch(/id="branding-contrast-text"[^>]* hidden/)
    await json(owner.agent, 'PATCH', `/v1/workspaces/${ws}/branding`, { primary_color: '#0b5fff' })
  })

  it('uploads a logo with a progress bar, shows it, and refuses a text file named .png next to the field', async () => {
    // A drawable PNG followed by padding (decoders stop at IEND): large enough for progress events.
    const png = new Uint8Array([...solidPng(48, 48, [11, 95, 255]), ...new Uint8Array(900 * 1024)])
    await page
      .locator('#branding-logo-file')
      .setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: Buffer.from(png) })
    expect(await send('Upload logo', '/settings/branding/logo')).toBe(200)
    await page.getByText('Logo uploaded.').waitFor()
    await page.waitForFunction(
      () => (document.querySelector('#branding-logo-current') as HTMLImageElement)?.complete,
    )
    expect(await naturalWidth(page, '#branding-logo-current')).toBe(48)
    expect(await page.locator('#branding-preview-logo').isVisible()).toBe(true)

    // The progress bar of the next upload fills as it is sent.
    const bar = page.locator('#branding-logo-progress')
    await page
      .locator('#branding-logo-file')
      .setInputFiles({ name: 'again.png', mimeType: 'image/png', buffer: Buffer.from(png) })
    // What the bar showed at each progress event (app.js's listener runs first: it was added first).
    type Seen = { hidden: boolean; value: number; loaded: number; total: number }
    await page.evaluate(() => {
      const seen: Seen[] = []
      ;(window as unknown as { seen: Seen[] }).seen = seen
      document.addEventListener('htmx:xhr:progress', (e) => {
        const bar = document.querySelector('#branding-logo-progress') as HTMLProgressElement
        const { loaded, total } = (e as CustomEvent).detail
        seen.push({ hidden: bar.hidden, value: bar.value, loaded, total })
      })
    })
    expect(await bar.isVisible()).toBe(false)
    expect(await send('Upload logo', '/settings/branding/logo')).toBe(200)
    const seen = await page.evaluate(() => (window as unknown as { seen: Seen[] }).seen)
    // The upload's own progress (the whole file went up), shown on a visible bar that reached 100.
    const upload = seen.find((s) => s.total >= png.byteLength)
    expect(upload).toMatchObject({ hidden: false, value: 100 })

    await page.locator('#branding-logo-file').setInputFiles({
      name: 'notes.png',
      mimeType: 'image/png',
      buffer: Buffer.from('meeting notes, not a picture'),
    })
    expect(await send('Upload logo', '/settings/branding/logo')).toBe(422)
    expect(await page.locator('#branding-logo-error').textContent()).toContain('PNG, JPEG, WebP or SVG')
    // The logo kept is the one before.
    expect(await naturalWidth(page, '#branding-logo-current')).toBe(48)
  })
})

describe("the workspace's hosted sign-in page", () => {
  it('shows the logo and applies the colours (computed style), the name escaped, nothing refused by its policy; a screenshot is kept', async () => {
    const { config } = await publicClient(server.core, server.baseUrl, ws, `${RP}/cb`)
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: `${RP}/cb`,
      scope: 'openid email',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    })
    const hosted = await (await sharedBrowser()).newContext()
    const signIn = await hosted.newPage()
    const problems: string[] = []
    signIn.on('pageerror', (e) => problems.push(e.message))
    signIn.on('console', (m) => {
      if (m.type() === 'error' || /Content Security Policy|Refused to/.test(m.text())) problems.push(m.text())
    })
    await signIn.goto(url.href)
    await signIn.getByRole('heading', { name: 'Sign in' }).waitFor()
    await signIn.waitForFunction(() => (document.querySelector('.brand img') as HTMLImageElement)?.complete)

    mkdirSync(ARTIFACTS, { recursive: true })
    await signIn.screenshot({ path: new URL('branding-sign-in.png', ARTIFACTS).pathname, fullPage: true })

    expect(await naturalWidth(signIn, '.brand img')).toBe(48)
    expect(await styleOf(signIn, 'button[type=submit]', 'background-color')).toBe(rgb('#0b5fff'))
    expect(await styleOf(signIn, 'body', 'background-color')).toBe(rgb('#fdf6e3'))
    expect(await styleOf(signIn, 'body', 'color')).toBe(rgb('#222222'))
    expect(await styleOf(signIn, 'h1', 'color')).toBe(rgb('#222222'))
    expect(await styleOf(signIn, '.legal a', 'color')).toBe(rgb('#0b5fff'))
    expect(await signIn.locator('.brand p').textContent()).toBe(NAME)
    expect(await signIn.title()).toBe(`Sign in · ${NAME}`)
    expect(
      await signIn.evaluate(() => (window as unknown as { __branded?: number }).__branded),
    ).toBeUndefined()
    expect(await signIn.getByRole('link', { name: 'Privacy policy' }).getAttribute('href')).toBe(
      'https://acme.example/privacy',
    )
    expect(await signIn.getByRole('link', { name: 'Terms' }).getAttribute('href')).toBe(
      'https://acme.example/terms',
    )
    expect(problems).toEqual([])

    // The same look on the instance's other pages, e.g. an error page.
    await signIn.goto(`${server.baseUrl}/i/${ws}/reset-password?token=nonsense`)
    expect(await styleOf(signIn, 'body', 'background-color')).toBe(rgb('#fdf6e3'))
    expect(await signIn.locator('.brand p').textContent()).toBe(NAME)
    expect(problems).toEqual([])
    await hosted.close()
  })

  it('loses the logo once it is removed in the dashboard, after a confirmation', async () => {
    expect(await send('Remove logo', '/settings/branding/logo/remove')).toBe(200)
    expect(confirmations.at(-1)).toBe('Remove the logo? The hosted pages lose it at once.')
    expect(await page.locator('#branding-logo-none').isVisible()).toBe(true)
    expect(await page.locator('#branding-preview-logo').isVisible()).toBe(false)
    const html = await (await fetch(`${server.baseUrl}/i/${ws}/forgot-password`)).text()
    expect(html).not.toContain('<img')
    expect(html).toContain('Acme &amp; Co</p>')
    expect(errors).toEqual([])
    // Typing, refusals, saving, uploading and removing the logo: nothing the policy refused, no
    // error but the 422s this file asks for on purpose (Chromium and htmx both log a 4xx answer).
    expect((await dashboardProblems()).filter((p) => !/ 422 /.test(p))).toEqual([])
  })
})
