// legs: once — pages checked in Chromium (axe-core, 375 px layout, console): no store dialect involved
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { mkdirSync, rmSync } from 'node:fs'
import { Secret, TOTP } from 'otpauth'
import type { BrowserContext, Locator, Page } from 'playwright-core'
import { signUp } from '../src/identity'
import { markEmailVerified } from '../src/identity/accounts'
import { solidPng, uploadLogo } from './support/branding'
import { sharedBrowser, signUpInBrowser } from './support/browser'
import { callApi, person } from './support/callers'
import { activeWorkspace, publicClient, registerApp } from './support/instances'
import { checkAccessibility, checkNarrowViewport, collectConsoleErrors } from './support/page-checks'
import { freePort, startTestServer, type TestServer } from './support/server'
import { authorizeUrl } from './support/sign-in'
import { type StripeStandIn, startStripeStandIn } from './support/stripe-stand-in'
import { eventually, json, type PlatformUser, signUpUser } from './support/users'

// Issue 57, "Must hold": every hosted page of a workspace instance, and the dashboard pages the
// other browser tests do not walk (billing, the dev outbox, the platform's device approval, the
// error pages), reached as a person reaches them, hold nothing in the console, no serious or
// critical accessibility violation and no sideways scrolling at 375 px (support/page-checks.ts).
// Screenshots of each (wide and 375 px) are kept in test-artifacts/hosted-pages/. One server on localhost (a
// passkey's RP ID is a domain), billing on (the local Stripe stand-in), no SMTP: mail is read
// from the dev outbox as its administrator.

const ARTIFACTS = new URL('../test-artifacts/hosted-pages/', import.meta.url)
const WIDE = { width: 1280, height: 900 }
// A case walks several pages, each screenshot twice and checked three ways: longer than 30 s on a
// busy machine.
setDefaultTimeout(90_000)
/** The app's redirect URI: not on this machine, answered by the browser context itself. */
const RP = 'https://rp.example.com/cb'
const adminUser = { email: 'root@example.com', password: 'root password 1', name: 'Root' }

let stripe: StripeStandIn
let server: TestServer
let admin: PlatformUser
let step = 0

beforeAll(async () => {
  rmSync(ARTIFACTS, { recursive: true, force: true })
  mkdirSync(ARTIFACTS, { recursive: true })
  stripe = startStripeStandIn(() => Date.now())
  const port = await freePort()
  server = await startTestServer({
    ...stripe.env,
    PORT: String(port),
    BASE_URL: `http://localhost:${port}`,
    // Workspace A, an IdP of workspace B, is this server: on http and loopback.
    IDPS_ALLOW_HTTP: 'true',
    IDPS_ALLOW_PRIVATE: 'true',
  })
  stripe.deliverTo = `${server.baseUrl}/v1/webhooks/payments`
  // The first platform account administers the install: it reads the dev outbox.
  admin = await signUpUser(server, adminUser)
})
afterAll(async () => {
  await server?.stop()
  stripe?.stop()
})

interface Tab {
  context: BrowserContext
  page: Page
  problems: () => Promise<string[]>
}

/** A browser of its own (cookies of its own) whose page's console is recorded from the start. */
async function browser(): Promise<Tab> {
  const context = await (await sharedBrowser()).newContext({ viewport: WIDE })
  await context.route(`${RP}**`, (r) => r.fulfill({ body: 'back at the app', contentType: 'text/plain' }))
  return recorded(context, await context.newPage())
}

/** Another tab of the same browser, recorded too. */
const otherTab = async (tab: Tab): Promise<Tab> => recorded(tab.context, await tab.context.newPage())

/** A tab whose `problems` answers what was recorded since it was last asked: each page its own. */
async function recorded(context: BrowserContext, page: Page): Promise<Tab> {
  const all = await collectConsoleErrors(page)
  let read = 0
  const problems = async () => {
    const seen = await all()
    const fresh = seen.slice(read)
    read = seen.length
    return fresh
  }
  return { context, page, problems }
}

/**
 * The page as it stands holds every check; its screenshots are kept as NN-name.png and, 375 px
 * wide, NN-name-375px.png. The narrow check leaves the viewport at 375 px: the page is widened
 * again for the walk to go on. An error page answers with its status (`status`): Chromium logs
 * that status of the document itself as a console error, which is the page being right.
 */
async function holds({ page, problems }: Tab, name: string, status?: number) {
  await page.waitForLoadState()
  step += 1
  const shot = (suffix: string) =>
    page.screenshot({
      path: new URL(`${String(step).padStart(2, '0')}-${name}${suffix}.png`, ARTIFACTS).pathname,
      fullPage: true,
    })
  await shot('')
  const ownStatus = `console: Failed to load resource: the server responded with a status of ${status} `
  const seen = (await problems()).filter((p) => !(status && p.startsWith(ownStatus)))
  expect({ name, problems: seen }).toEqual({ name, problems: [] })
  expect({ name, accessibility: await checkAccessibility(page) }).toEqual({ name, accessibility: [] })
  const narrow = await checkNarrowViewport(page)
  await shot('-375px')
  expect({ name, narrow }).toEqual({ name, narrow: [] })
  await page.setViewportSize(WIDE)
}

/** Opens `url` in the tab, waits for what shows that the page is there, and checks the page (`holds`). */
async function visit(tab: Tab, url: string, shown: (page: Page) => Locator, name: string, status?: number) {
  await tab.page.goto(url)
  await shown(tab.page).waitFor()
  await holds(tab, name, status)
}

/** A page that refuses what it was asked (a link that is no good, a bad request): 400 and why. */
const refused = (tab: Tab, url: string, name: string) =>
  visit(tab, url, (p) => p.getByRole('alert'), name, 400)

/** The link of the newest mail to `to` in the dev outbox whose link's path has `path`. */
async function mailedLink(to: string, path: string): Promise<string> {
  return eventually(`a mail to ${to} with a ${path} link`, async () => {
    const res = await admin.agent.request('/dev/outbox.json')
    const mails = (await res.json()) as { to: string; text: string }[]
    for (const mail of mails) {
      const link = mail.text.match(/https?:\/\/\S+/g)?.find((l) => new URL(l).pathname.includes(path))
      if (mail.to === to && link) return link
    }
    return undefined
  })
}

/** The dashboard signed in with the hosted sign-in form, at /app/. */
async function dashboard(user: { email: string; password: string }): Promise<Tab> {
  const tab = await browser()
  await tab.page.goto(`${server.baseUrl}/v1/auth/login`)
  await signIn(tab.page, user)
  await tab.page.waitForURL(`${server.baseUrl}/app/`)
  return tab
}

async function signIn(page: Page, user: { email: string; password: string }) {
  await page.getByLabel('Email').fill(user.email)
  await page.getByLabel('Password').fill(user.password)
  await page.getByRole('button', { name: 'Sign in' }).click()
}

/** A workspace of the administrator's with `policy`, and an spa app redirecting to RP. */
async function workspace(policy: Parameters<typeof activeWorkspace>[2] = {}) {
  const ws = await activeWorkspace(server.core, admin.id, policy)
  const { app } = await publicClient(server.core, server.baseUrl, ws, RP)
  return { ws, signInUrl: async () => (await authorizeUrl(server, ws, app.clientId, RP)).href }
}

/**
 * Addresses as long as real ones get (a first and last name, a department's subdomain): shown
 * whole on the pages that name them, they must wrap inside the card on a phone.
 */
const LONG = (who: string) => `${who}.featherstonehaughmontgomery@engineering.examplecompany.com`

const totpCode = (secret: string) => new TOTP({ secret: Secret.fromBase32(secret) }).generate()

/** The page at an instance's issuer URL, and its error page for a sign-in that is gone (400). */
async function issuerAndExpiredSignIn(tab: Tab, ws: string, prefix: string) {
  const discovery = (p: Page) => p.getByRole('link', { name: 'OpenID configuration (discovery)' })
  await visit(tab, `${server.baseUrl}/i/${ws}`, discovery, `${prefix}issuer`)
  const gone = `${server.baseUrl}/i/${ws}/interaction/gone-long-ago`
  const expired = (p: Page) => p.getByText('This sign-in request has expired')
  await visit(tab, gone, expired, `${prefix}error-expired-interaction`, 400)
}

describe('the hosted pages of a workspace instance', () => {
  it('the issuer page, and the error pages: not found, bad request, expired sign-in', async () => {
    const { ws } = await workspace()
    const tab = await browser()
    await issuerAndExpiredSignIn(tab, ws, '')
    await visit(
      tab,
      `${server.baseUrl}/i/ws_nothing_here/`,
      (p) => p.getByRole('heading', { name: 'Not found' }),
      'error-not-found',
      404,
    )
    await refused(tab, `${server.baseUrl}/i/${ws}/auth?client_id=nobody`, 'error-bad-request')
    await tab.context.close()
  })

  it('a branded workspace: its logo, name, colours and legal links on the sign-in, issuer and error pages', async () => {
    const { ws, signInUrl } = await workspace()
    const owner = await person(server.core, { ws, role: 'admin' })
    const branded = await callApi(server.baseUrl, owner, 'PATCH', `/v1/workspaces/${ws}/branding`, {
      // A compound word as long as German firms' names run: it must wrap beside the logo.
      display_name: 'Württembergische Versicherungsgesellschaft',
      primary_color: '#0b5394',
      background_color: '#e8eef5',
      text_color: '#1b1b1b',
      privacy_policy_url: 'https://acme.example/privacy',
      terms_url: 'https://acme.example/terms',
    })
    expect(branded.status).toBe(200)
    const logo = solidPng(400, 80, [11, 83, 148])
    expect((await uploadLogo(server.baseUrl, owner, ws, logo, 'logo.png', 'image/png')).status).toBe(200)
    const tab = await browser()
    await visit(tab, await signInUrl(), (p) => p.getByRole('heading', { name: 'Sign in' }), 'branded-sign-in')
    await issuerAndExpiredSignIn(tab, ws, 'branded-')
    await tab.context.close()
  })

  it('forgot password, the mailed reset form, its done page, and a link that is no good', async () => {
    const { ws, signInUrl } = await workspace()
    const user = { email: LONG('reset'), password: 'first password 1' }
    await signUp(server.core, ws, user)
    const tab = await browser()
    await tab.page.goto(await signInUrl())
    await tab.page.getByRole('link', { name: 'Forgot password?' }).click()
    await tab.page.getByRole('heading', { name: 'Reset your password' }).waitFor()
    await holds(tab, 'forgot-password')
    await tab.page.getByLabel('Email').fill(user.email)
    await tab.page.getByRole('button', { name: 'Send reset link' }).click()
    await tab.page.getByRole('heading', { name: 'Check your email' }).waitFor()
    await holds(tab, 'forgot-password-sent')

    // The mail client opens the link in another tab of the same browser.
    const link = await mailedLink(user.email, 'reset-password')
    const mailTab = await otherTab(tab)
    await visit(
      mailTab,
      link,
      (p) => p.getByRole('heading', { name: 'Choose a new password' }),
      'reset-password',
    )
    await mailTab.page.getByLabel('New password').fill('second password 2')
    await mailTab.page.getByRole('button', { name: 'Save password' }).click()
    await mailTab.page.getByRole('alert').or(mailTab.page.getByRole('status')).waitFor()
    await holds(mailTab, 'reset-password-done')
    // The form of a link already used: its password is refused with why.
    await mailTab.page.goto(link)
    await mailTab.page.getByLabel('New password').fill('third password 3')
    await mailTab.page.getByRole('button', { name: 'Save password' }).click()
    await mailTab.page.getByRole('heading', { name: 'Link expired' }).waitFor()
    await holds(mailTab, 'reset-password-used-link', 400)
    await tab.context.close()
  })

  it('verification: the page that waits, the link opened in another tab, and a link that is no good', async () => {
    const { ws, signInUrl } = await workspace({ requireEmailVerification: true })
    const tab = await browser()
    await tab.page.goto(await signInUrl())
    await signUpInBrowser(tab.page, { name: 'Vera', email: LONG('vera'), password: 'verify me please 1' })
    await tab.page.getByRole('heading', { name: 'Check your email' }).waitFor()
    await holds(tab, 'verify-waiting')
    const link = await mailedLink(LONG('vera'), 'verify-email')
    // Another browser (another device): the address is proved, the sign-in goes on where it started.
    const elsewhere = await browser()
    await visit(
      elsewhere,
      link,
      (p) => p.getByRole('heading', { name: 'Email verified' }),
      'verify-link-elsewhere',
    )
    await tab.context.close()
    await refused(
      elsewhere,
      `${server.baseUrl}/i/${ws}/verify-email?token=not-a-token`,
      'verify-link-invalid',
    )
    // The waiting page's poll, or its "continue" link, once the sign-in is gone.
    await visit(
      elsewhere,
      `${server.baseUrl}/i/${ws}/interaction/gone-long-ago/verify`,
      (p) => p.getByRole('heading', { name: 'Sign-in expired' }),
      'verify-sign-in-expired',
      400,
    )
    await elsewhere.context.close()

    // The mail client opens the link in another tab of the browser signing in: "go back to the tab".
    const same = await browser()
    await same.page.goto(await signInUrl())
    await signUpInBrowser(same.page, { name: 'Val', email: LONG('val'), password: 'verify me please 2' })
    await same.page.getByRole('heading', { name: 'Check your email' }).waitFor()
    const mailTab = await otherTab(same)
    await visit(
      mailTab,
      await mailedLink(LONG('val'), 'verify-email'),
      (p) => p.getByText('go back to the tab where you were signing in'),
      'verify-link-same-browser',
    )
    await same.context.close()
  })

  it('MFA: enrolment with an authenticator app, recovery codes, the challenge, passkeys, the manage page', async () => {
    const { ws, signInUrl } = await workspace({ mfa: 'required' })
    const user = { email: 'mfa@example.com', password: 'second factor 1' }
    await signUp(server.core, ws, user)
    const tab = await browser()
    await tab.page.goto(await signInUrl())
    await signIn(tab.page, user)
    await tab.page.getByRole('heading', { name: 'Set up two-step verification' }).waitFor()
    await holds(tab, 'mfa-enrol')
    const secret = (await tab.page.locator('#totp-secret').textContent())?.trim() ?? ''
    await tab.page.getByLabel('Code from the app').fill(totpCode(secret))
    await tab.page.getByRole('button', { name: 'Turn on' }).click()
    await tab.page.getByRole('heading', { name: 'Save your recovery codes' }).waitFor()
    await holds(tab, 'mfa-recovery-codes')
    const recovery = (await tab.page.locator('#recovery-codes code').allTextContents()).map((c) => c.trim())
    // Reloaded, the codes are not shown again: the step says it is on.
    await tab.page.reload()
    await tab.page.getByRole('heading', { name: 'Two-step verification is on' }).waitFor()
    await holds(tab, 'mfa-enrolled')
    await tab.page.getByRole('button', { name: 'Continue' }).click()
    await tab.page.waitForURL(`${RP}**`)
    await tab.context.close()

    const again = await browser()
    await again.page.goto(await signInUrl())
    await again.page.getByRole('link', { name: 'Sign in with a passkey' }).click()
    await again.page.getByRole('heading', { name: 'Sign in with a passkey' }).waitFor()
    await holds(again, 'passkey-sign-in')
    await again.page.getByRole('link', { name: 'Sign in with a password' }).click()
    await signIn(again.page, user)
    await again.page.getByRole('heading', { name: 'Two-step verification' }).waitFor()
    await holds(again, 'mfa-challenge')
    await again.page.getByLabel('Authentication code').fill(recovery[0]!)
    await again.page.getByRole('button', { name: 'Verify' }).click()
    await again.page.waitForURL(`${RP}**`)
    await visit(
      again,
      `${server.baseUrl}/i/${ws}/mfa`,
      (p) => p.getByRole('heading', { name: 'Two-step verification' }),
      'mfa-manage',
    )
    await again.context.close()
  })

  it('an invitation: the page of its mailed link, its done page, and a link that is no good', async () => {
    const { ws } = await workspace()
    const sent = await json(admin.agent, 'POST', `/v1/workspaces/${ws}/users/invite`, {
      email: LONG('invitee'),
      name: 'Invitee',
    })
    expect(sent.status).toBe(201)
    const tab = await browser()
    await visit(
      tab,
      await mailedLink(LONG('invitee'), 'accept-invite'),
      (p) => p.getByRole('heading', { name: 'Accept your invitation' }),
      'accept-invite',
    )
    await tab.page.getByLabel('Password').fill('invited password 1')
    await tab.page.getByRole('button', { name: 'Accept and set password' }).click()
    await tab.page.getByRole('status').waitFor()
    await holds(tab, 'accept-invite-done')
    await refused(tab, `${server.baseUrl}/i/${ws}/accept-invite?token=not-a-token`, 'accept-invite-invalid')
    await tab.context.close()
  })

  it('an IdP: the account-linking page, and the broker refusing an answer of no sign-in', async () => {
    // Workspace B signs in through workspace A (an oidc IdP); Lin has an account of her address in
    // both, and B does not trust A's word on addresses: she proves B's account first.
    const a = await workspace()
    const b = await workspace()
    const lin = { email: 'lin@example.com', password: 'lin password 12', name: 'Lin' }
    for (const ws of [a.ws, b.ws]) await markEmailVerified(server.core, await signUp(server.core, ws, lin))
    const redirectUri = `${server.baseUrl}/i/${b.ws}/broker/callback`
    const appOfA = await registerApp(server.core, a.ws, { type: 'web', redirectUris: [redirectUri] })
    const owner = await person(server.core, { ws: b.ws, role: 'admin' })
    const idp = await callApi(server.baseUrl, owner, 'POST', `/v1/workspaces/${b.ws}/idps`, {
      type: 'oidc',
      name: 'Workspace A',
      issuer: `${server.baseUrl}/i/${a.ws}/`,
      client_id: appOfA.clientId,
      client_secret: appOfA.clientSecret,
    })
    expect(idp.status).toBe(201)
    const tab = await browser()
    await tab.page.goto(await b.signInUrl())
    await tab.page.getByRole('link', { name: 'Continue with Workspace A' }).click()
    await tab.page.waitForURL((u) => u.pathname.startsWith(`/i/${a.ws}/interaction/`))
    await signIn(tab.page, lin)
    await tab.page.getByRole('heading', { name: 'This email already has an account' }).waitFor()
    await holds(tab, 'link-account')
    await tab.page.getByLabel('Password').fill(lin.password)
    await tab.page.getByRole('button', { name: 'Sign in and link' }).click()
    await tab.page.waitForURL(`${RP}**`)
    await visit(
      tab,
      `${server.baseUrl}/i/${b.ws}/broker/callback?state=nothing`,
      (p) => p.getByRole('heading', { name: 'Sign-in failed' }),
      'broker-refused',
      400,
    )
    await tab.context.close()
  })

  it('logout: the confirmation and the signed-out page; the device page of a workspace', async () => {
    const { ws, signInUrl } = await workspace()
    const user = { email: 'leaving@example.com', password: 'leaving soon 1' }
    await signUp(server.core, ws, user)
    const tab = await browser()
    await tab.page.goto(await signInUrl())
    await signIn(tab.page, user)
    await tab.page.waitForURL(`${RP}**`)
    await visit(
      tab,
      `${server.baseUrl}/i/${ws}/session/end`,
      (p) => p.getByRole('heading', { name: 'Signing you out…' }),
      'logout',
    )
    await tab.page.getByRole('button', { name: 'Sign out' }).click()
    await tab.page.getByRole('heading', { name: 'Signed out' }).waitFor()
    await holds(tab, 'logout-done')
    await visit(
      tab,
      `${server.baseUrl}/i/${ws}/device`,
      (p) => p.getByRole('heading', { name: 'Connect a device' }),
      'device-input',
    )
    await tab.page.getByLabel('Code').fill('WRONG-CODE')
    await tab.page.getByRole('button', { name: 'Continue' }).click()
    await tab.page.getByRole('alert').waitFor()
    await holds(tab, 'device-input-wrong-code', 400)
    await tab.context.close()
  })
})

describe('the dashboard pages no other walk visits', () => {
  it('the dev outbox, the billing page, the platform device approval (code, confirm, done) and its MFA page', async () => {
    const { ws } = await workspace()
    const tab = await dashboard(adminUser)
    await visit(
      tab,
      `${server.baseUrl}/dev/outbox`,
      (p) => p.getByRole('heading', { name: 'Dev outbox' }),
      'dev-outbox',
    )
    const billing = `${server.baseUrl}/app/workspaces/${ws}/billing`
    await visit(tab, billing, (p) => p.locator('#billing-plan-name'), 'billing')
    // On a paid plan the page has more: the downgrade, its banner once scheduled, the portal.
    await tab.context.route('https://checkout.stripe.test/**', (r) => r.fulfill({ body: 'Stripe Checkout' }))
    await tab.page.getByRole('button', { name: 'Upgrade to Pro' }).click()
    await tab.page.waitForURL(/^https:\/\/checkout\.stripe\.test\/c\/pay\/cs_test_/)
    await stripe.completeCheckout(tab.page.url().split('/').at(-1)!)
    await tab.page.goto(billing)
    await tab.page.getByLabel('Downgrade at the end of the period to').selectOption('free')
    await tab.page.getByRole('button', { name: 'Schedule downgrade' }).click()
    await tab.page.locator('#scheduled-switch').waitFor()
    await holds(tab, 'billing-pro-downgrade-scheduled')

    // A CLI's sign-in: its person types the code shown on the terminal.
    const started = (await (
      await fetch(`${server.baseUrl}/v1/auth/device/start`, { method: 'POST' })
    ).json()) as { user_code: string; verification_uri: string }
    await visit(
      tab,
      started.verification_uri,
      (p) => p.getByRole('heading', { name: 'Connect a device' }),
      'platform-device-input',
    )
    await tab.page.getByLabel('Code').fill(started.user_code)
    await tab.page.getByRole('button', { name: 'Continue' }).click()
    await tab.page.getByRole('heading', { name: 'Confirm the device' }).waitFor()
    await holds(tab, 'platform-device-confirm')
    await tab.page.getByRole('button', { name: 'Allow' }).click()
    await tab.page.getByRole('heading', { name: 'Device connected' }).waitFor()
    await holds(tab, 'platform-device-done')
    // Where a dashboard user turns on two-step verification for their own account.
    const factors = (p: Page) => p.getByText('Authenticator app: off. Passkeys: 0.')
    await visit(tab, `${server.baseUrl}/i/platform/mfa`, factors, 'platform-mfa')
    await tab.context.close()
  })

  it('the error pages: not found, and not allowed to a member without the role', async () => {
    const { ws } = await workspace()
    const developer = await person(server.core, { ws, role: 'developer' })
    const tab = await browser()
    const [name, value] = developer.cookie.split('=') as [string, string]
    await tab.context.addCookies([{ name, value, url: server.baseUrl }])
    await visit(
      tab,
      `${server.baseUrl}/app/workspaces/${ws}/no-such-page`,
      (p) => p.getByRole('heading', { name: 'Not found' }),
      'dashboard-not-found',
      404,
    )
    await visit(
      tab,
      `${server.baseUrl}/app/workspaces/${ws}/settings/audit-log`,
      (p) => p.getByRole('heading', { name: 'Not allowed' }),
      'dashboard-not-allowed',
      403,
    )
    await tab.context.close()
  })
})
