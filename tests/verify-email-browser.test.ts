// legs: once — pages in Chromium; the services behind them are tested on both stores by the API tests
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import type { ParsedMail } from 'mailparser'
import * as oidc from 'openid-client'
import type { BrowserContext, Page, Route } from 'playwright-core'
import { signUp } from '../src/identity/accounts'
import { ManualClock } from '../src/shared/clock'
import { sharedBrowser, signUpInBrowser } from './support/browser'
import { Agent } from './support/browserless'
import { activeWorkspace, pkceAuthorization, publicClient } from './support/instances'
import { startTestServer, type TestServer } from './support/server'
import { type SmtpSink, startSmtpServer } from './support/smtp'

// The link mailed to a sign-in that waits on its address (require_email_verification), in Chromium:
// opened in the browser that is signing in, it finishes that sign-in at the app; opened anywhere
// else, it says the address is verified and the waiting tab goes on by itself (htmx polls the
// interaction). The interaction's expiry is reached by turning the server's clock.

/** The SPAs the app's site serves, by the path they live at (`/spa/<n>/`): their issuer and client. */
const spas = new Map<string, { issuer: string; clientId: string }>()
const OIDC_CLIENT = Bun.file('node_modules/oidc-client-ts/dist/browser/oidc-client-ts.min.js')

/**
 * A single-page app on oidc-client-ts, as a real one is: PKCE and state in its tab's sessionStorage,
 * the code exchanged by the page itself at its redirect URI (`/spa/<n>/cb`), the profile shown.
 */
const spaPage = (issuer: string, clientId: string) => `<!doctype html>
<html><head><title>SPA</title></head><body>
<p id="status">signed out</p><button id="login">Sign in</button>
<script src="/oidc-client-ts.min.js"></script>
<script>
const manager = new oidc.UserManager({
  authority: ${JSON.stringify(issuer)},
  client_id: ${JSON.stringify(clientId)},
  redirect_uri: location.origin + location.pathname.replace(/cb$/, '') + 'cb',
  response_type: 'code',
  scope: 'openid email',
})
const status = document.getElementById('status')
document.getElementById('login').onclick = () => manager.signinRedirect()
if (location.pathname.endsWith('/cb'))
  manager.signinRedirectCallback().then(
    (user) => { status.textContent = 'signed in as ' + user.profile.email },
    (e) => { status.textContent = 'sign-in failed: ' + e.message },
  )
</script></body></html>`

/** The app: a site of its own that answers its redirect URI with a plain page, and serves its SPAs. */
const rp = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch: (req) => {
    const path = new URL(req.url).pathname
    if (path === '/oidc-client-ts.min.js') return new Response(OIDC_CLIENT)
    const spa = spas.get(path.replace(/cb$/, ''))
    if (spa)
      return new Response(spaPage(spa.issuer, spa.clientId), { headers: { 'content-type': 'text/html' } })
    return new Response('back at the app')
  },
})
const RP = `http://127.0.0.1:${rp.port}`
const atRp = (u: URL) => u.href.startsWith(RP)
const SUBJECT = 'Verify your email address'
const HOUR = 3600_000
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
  rp.stop(true)
})
// oidc-provider reads the real time: each test starts the clock there.
beforeEach(() => clock.set(Date.now()))

/** A workspace that requires verified addresses (and `mfa`), with an spa app. */
async function workspace(mfa: 'off' | 'required' = 'off') {
  const ws = await activeWorkspace(server.core, 'usr_owner', { requireEmailVerification: true, mfa })
  const { config } = await publicClient(server.core, server.baseUrl, ws, `${RP}/cb`)
  return { ws, config }
}

const recipients = (mail: ParsedMail) =>
  [mail.to ?? []].flat().flatMap((a) => a.value.map((v) => v.address?.toLowerCase()))

/** The link mailed to `address` under `subject` (mail jobs run on the test's clock: turned by `tick`). */
async function linkTo(address: string, subject = SUBJECT): Promise<URL> {
  const deadline = Date.now() + 10_000
  for (;;) {
    await server.tick()
    const mail = smtp.messages.find((m) => m.subject === subject && recipients(m).includes(address))
    if (mail) return new URL(mail.text!.match(/https?:\/\/\S+/)![0])
    if (Date.now() > deadline) throw new Error(`no "${subject}" mail to ${address}`)
    await Bun.sleep(20)
  }
}

/** A browser of its own (a context: cookies of its own). */
const browser = async (): Promise<BrowserContext> => (await sharedBrowser()).newContext()

/** What Chromium reports about a page: CSP violations and script errors. */
function problemsOf(page: Page): string[] {
  const problems: string[] = []
  page.on('console', (m) => {
    if (m.type() === 'error' || m.text().includes('Content Security Policy')) problems.push(m.text())
  })
  page.on('pageerror', (e) => problems.push(e.message))
  return problems
}

/**
 * Signs up in a new tab of `context` until the page that waits on the address; the tab, the link
 * mailed, and `claims` to exchange the code the tab (or another) comes back to the app with.
 */
async function waitingSignUp(context: BrowserContext, config: oidc.Configuration, email: string) {
  const page = await context.newPage()
  const problems = problemsOf(page)
  const { url, verifier } = await pkceAuthorization(config, `${RP}/cb`, 'openid email')
  await page.goto(url.href)
  await signUpInBrowser(page, { email, password: 'verify-me-please-1' })
  await page.getByRole('heading', { name: 'Check your email' }).waitFor()
  const link = await linkTo(email)
  const claims = async (back: Page) => {
    // The poll asks every 2 s: a few seconds are enough.
    await back.waitForURL(`${RP}/cb?**`, { timeout: 10_000 })
    const tokens = await oidc.authorizationCodeGrant(config, new URL(back.url()), {
      pkceCodeVerifier: verifier,
    })
    return tokens.claims()
  }
  return { page, problems, link, claims }
}

describe('the verification link of a sign-in that waits on the address', () => {
  it('opened in another tab of the browser signing in, sends that tab back and the waiting tab gets the code', async () => {
    const { config } = await workspace()
    const context = await browser()
    const email = 'same-browser@example.com'
    const waiting = await waitingSignUp(context, config, email)
    // The mail is opened in another tab of the same browser, as a mail client opens it.
    const tab = await context.newPage()
    await tab.goto(waiting.link.href)
    await tab.getByText('go back to the tab where you were signing in').waitFor()
    expect(await waiting.claims(waiting.page)).toMatchObject({ email, email_verified: true })
    expect(atRp(new URL(tab.url()))).toBe(false)
    expect(waiting.problems).toEqual([])
    await context.close()
  }, 60_000)

  it('opened in another browser, says the address is verified, and the waiting tab goes on by itself', async () => {
    const { config } = await workspace()
    const first = await browser()
    const email = 'other-browser@example.com'
    const waiting = await waitingSignUp(first, config, email)

    const second = await browser()
    const elsewhere = await second.newPage()
    await elsewhere.goto(waiting.link.href)
    await elsewhere.getByRole('heading', { name: 'Email verified' }).waitFor()
    await elsewhere.getByText(`${email} is verified`).waitFor()
    await elsewhere.getByText('continues by itself').waitFor()
    expect(atRp(new URL(elsewhere.url()))).toBe(false)

    // Nobody touches the first tab: its poll sees the address verified and the sign-in goes on.
    expect(await waiting.claims(waiting.page)).toMatchObject({ email, email_verified: true })
    expect(waiting.problems).toEqual([])
    await first.close()
    await second.close()
  }, 60_000)

  it('goes on to the second step the login policy requires before the app gets a code', async () => {
    const { config } = await workspace('required')
    const context = await browser()
    const waiting = await waitingSignUp(context, config, 'verify-then-enrol@example.com')
    const tab = await context.newPage()
    await tab.goto(waiting.link.href)
    await waiting.page.getByRole('heading', { name: 'Set up two-step verification' }).waitFor()
    expect(atRp(new URL(waiting.page.url()))).toBe(false)
    await context.close()
  }, 60_000)

  it('once the sign-in has expired, ends on a page with a way to sign in again, from the link and in the waiting tab', async () => {
    const { config } = await workspace()
    const context = await browser()
    const email = 'too-late@example.com'
    const waiting = await waitingSignUp(context, config, email)
    // The sign-in (an interaction lives an hour) expires; the link (a day) still verifies.
    clock.advance(2 * HOUR)

    const tab = await context.newPage()
    await tab.goto(waiting.link.href)
    await tab.getByRole('heading', { name: 'Email verified' }).waitFor()
    await tab.getByText('expired').waitFor()
    const again = tab.getByRole('link', { name: 'Sign in' })
    expect(await again.getAttribute('href')).toBe(`${RP}/`)

    // The waiting tab, untouched, leaves the page that can no longer go on.
    await waiting.page.getByRole('heading', { name: 'Sign-in expired' }).waitFor()
    expect(await waiting.page.getByRole('link', { name: 'Sign in' }).getAttribute('href')).toBe(`${RP}/`)
    await context.close()
  }, 60_000)
})

describe('the poll of the waiting page', () => {
  it('says "verified yet or not" only to the browser holding the interaction', async () => {
    const { config } = await workspace()
    const email = 'polled@example.com'
    const agent = new Agent(server.baseUrl)
    const { url } = await pkceAuthorization(config, `${RP}/cb`, 'openid email')
    const signIn = await agent.follow(url, {}, atRp)
    const form = await agent.follow(new URL(`${signIn.url.pathname}/signup`, server.baseUrl))
    const fields = { email, password: 'verify-me-please-1', name: 'P' }
    const pending = await agent.submit(await form.res.text(), form.url, '/signup', fields, atRp)
    const html = await pending.res.text()
    expect(html).toContain('<h1>Check your email</h1>')
    const poll = html.match(/hx-get="([^"]+)"/)?.[1]?.replace(/&amp;/g, '&')
    expect(poll).toBeTruthy()
    const pollUrl = new URL(poll!, server.baseUrl)
    expect(pollUrl.pathname).toBe(`${signIn.url.pathname}/verify`)
    const htmx = { 'hx-request': 'true' }

    /** What a poll answers, as the page's script sees it. */
    const seen = async (res: Response) => ({
      status: res.status,
      redirect: res.headers.get('hx-redirect') ?? undefined,
      body: await res.text(),
    })
    const stranger = () => fetch(pollUrl, { headers: htmx }).then(seen)
    const unknownUid = new URL(pollUrl.href.replace(/\/interaction\/[^/]+\//, '/interaction/nobody123/'))
    const strangerOfUnknown = await seen(await fetch(unknownUid, { headers: htmx }))

    // The browser that holds the interaction: "not yet" leaves the page as it is.
    expect(await seen(await agent.request(pollUrl, { headers: htmx }))).toEqual({
      status: 204,
      redirect: undefined,
      body: '',
    })
    // Without its cookie: the answer to an interaction that never existed, whatever the state.
    const before = await stranger()
    const sameAsUnknown = (s: typeof before) =>
      expect({
        ...s,
        redirect: s.redirect?.replace(pollUrl.pathname, unknownUid.pathname),
      }).toEqual(strangerOfUnknown)
    sameAsUnknown(before)
    expect(before.body).not.toContain(email)

    const verified = await new Agent(server.baseUrl).follow(await linkTo(email))
    expect(await verified.res.text()).toContain('<h1>Email verified</h1>')
    sameAsUnknown(await stranger())
    // The holder is told to go on: the page loads the poll's URL, which finishes the sign-in.
    const go = await seen(await agent.request(pollUrl, { headers: htmx }))
    expect(go.status).toBe(200)
    expect(go.redirect).toBe(`${pollUrl.pathname}${pollUrl.search}`)
    const back = await agent.follow(go.redirect!, {}, atRp)
    expect(atRp(back.url)).toBe(true)
    expect(back.url.searchParams.get('code')).toBeTruthy()

    // Ended: the browser that started it is told that it went on elsewhere; anyone else, that it expired.
    const holder = await agent.request(pollUrl)
    expect(holder.status).toBe(409)
    expect(await holder.text()).toContain('<h1>Continued in another tab</h1>')
    const other = await fetch(pollUrl)
    expect(other.status).toBe(400)
    const otherHtml = await other.text()
    expect(otherHtml).toContain('<h1>Sign-in expired</h1>')
    expect(otherHtml).not.toContain('another tab')
  })
})

/** A new SPA of a workspace (its own path on the app's site), opened in a new tab of `context` and sent to sign in. */
async function spaSignIn(context: BrowserContext, ws: string) {
  const path = `/spa/${spas.size}/`
  const { app } = await publicClient(server.core, server.baseUrl, ws, `${RP}${path}cb`)
  spas.set(path, { issuer: `${server.baseUrl}/i/${ws}`, clientId: app.clientId })
  const page = await context.newPage()
  const problems = problemsOf(page)
  await page.goto(`${RP}${path}`)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('heading', { name: 'Sign in' }).waitFor()
  /** The SPA's own tab shows the account: it exchanged the code with the PKCE verifier it kept. */
  const signedIn = (email: string) =>
    page.getByText(`signed in as ${email}`).waitFor({ timeout: SIGNED_IN_WITHIN_MS })
  return { page, problems, path, signedIn }
}

/** The waiting page polls every 2 s: the SPA's tab is back, signed in, within a few seconds. */
const SIGNED_IN_WITHIN_MS = 5_000

/** An SPA's sign-up in a new tab of `context` until "Check your email"; the SPA and the mailed link. */
async function spaWaitingOnAddress(context: BrowserContext, email: string) {
  const ws = await activeWorkspace(server.core, 'usr_owner', { requireEmailVerification: true })
  const spa = await spaSignIn(context, ws)
  await signUpInBrowser(spa.page, { email, password: 'verify-me-please-1' })
  await spa.page.getByRole('heading', { name: 'Check your email' }).waitFor()
  return { ...spa, link: await linkTo(email) }
}

type Spa = Awaited<ReturnType<typeof spaSignIn>> & { link: URL }

/**
 * A case of an SPA's tab in a browser of its own, waiting (`waitOn`) for the mail to `email`: `body`
 * opens the link and sees the tab end; the SPA's tab meets no script error or policy violation.
 */
const spaCase = (
  name: string,
  email: string,
  waitOn: (context: BrowserContext, email: string) => Promise<Spa>,
  body: (spa: Spa, context: BrowserContext) => Promise<void>,
) =>
  it(name, async () => {
    const context = await browser()
    const spa = await waitOn(context, email)
    await body(spa, context)
    expect(spa.problems).toEqual([])
    await context.close()
  }, 60_000)

/** Opens a mailed link in a new tab of `context`, as a mail client does; the tab. */
async function openLink(context: BrowserContext, link: URL) {
  const tab = await context.newPage()
  await tab.goto(link.href)
  return tab
}

/** A password account of a new workspace, and its SPA's tab in `context` at "Check your email" after "Forgot password?". */
async function spaWaitingOnReset(context: BrowserContext, email: string) {
  const ws = await activeWorkspace(server.core, 'usr_owner', { requireEmailVerification: true })
  await signUp(server.core, ws, { email, password: 'forgotten password 1' })
  const spa = await spaSignIn(context, ws)
  await spa.page.getByRole('link', { name: 'Forgot password?' }).click()
  await spa.page.getByLabel('Email').fill(email)
  await spa.page.getByRole('button', { name: 'Send reset link' }).click()
  await spa.page.getByRole('heading', { name: 'Check your email' }).waitFor()
  return { ...spa, link: await linkTo(email, 'Reset your password') }
}

/** Saves `password` through the reset link, in a new tab of `context`; the tab. */
async function newPassword(context: BrowserContext, link: URL, password: string) {
  const tab = await openLink(context, link)
  await tab.getByLabel('New password').fill(password)
  await tab.getByRole('button', { name: 'Save password' }).click()
  await tab.getByRole('heading', { name: 'Password changed' }).waitFor()
  return tab
}

describe('an SPA (oidc-client-ts) whose sign-up waits on the address: its own tab ends signed in', () => {
  spaCase(
    'with the link opened in a new tab of the same browser, kept open',
    'spa-kept@example.com',
    spaWaitingOnAddress,
    async (spa, context) => {
      const tab = await openLink(context, spa.link)
      await tab.getByRole('heading', { name: 'Email verified' }).waitFor()
      await tab.getByText('go back to the tab where you were signing in').waitFor()
      await spa.signedIn('spa-kept@example.com')
      // The link's tab stays where it is: it never went to the app, and can no longer finish.
      expect(atRp(new URL(tab.url()))).toBe(false)
      await tab.getByRole('link', { name: 'Continue here instead' }).click()
      await tab.getByRole('heading', { name: 'Continued in another tab' }).waitFor()
    },
  )

  spaCase(
    'with the link opened in a new tab of the same browser, closed at once',
    'spa-closed@example.com',
    spaWaitingOnAddress,
    async (spa, context) => {
      const tab = await openLink(context, spa.link)
      await tab.close()
      await spa.signedIn('spa-closed@example.com')
    },
  )

  spaCase(
    'with the link opened in another browser',
    'spa-elsewhere@example.com',
    spaWaitingOnAddress,
    async (spa) => {
      const other = await browser()
      const tab = await openLink(other, spa.link)
      await tab.getByText('go back to the tab where you were signing in').waitFor()
      await spa.signedIn('spa-elsewhere@example.com')
      await other.close()
    },
  )

  it('but "Continue here instead" finishes in the link\'s tab, and the SPA\'s tab says where it went', async () => {
    const context = await browser()
    const spa = await spaWaitingOnAddress(context, 'spa-here@example.com')
    // The SPA's tab is slow to ask (a background tab): its polls wait until the other tab is done.
    const held: Route[] = []
    await spa.page.route(/\/verify\?/, (route) => {
      held.push(route)
    })
    const tab = await openLink(context, spa.link)
    await tab.getByRole('link', { name: 'Continue here instead' }).click()
    await tab.waitForURL(`${RP}${spa.path}cb?**`)
    expect(new URL(tab.url()).searchParams.get('code')).toBeTruthy()

    await spa.page.unroute(/\/verify\?/)
    for (const route of held) await route.continue()
    await spa.page.getByRole('heading', { name: 'Continued in another tab' }).waitFor()
    expect(atRp(new URL(spa.page.url()))).toBe(false)
    await context.close()
  }, 60_000)

  spaCase(
    'with a password reset asked for from its sign-in: once the new password is saved',
    'spa-reset@example.com',
    spaWaitingOnReset,
    async (spa, context) => {
      const tab = await newPassword(context, spa.link, 'remembered password 2')
      await tab.getByText('go back to the tab where you were signing in').waitFor()
      await spa.signedIn('spa-reset@example.com')
    },
  )

  spaCase(
    'with the new password saved in another browser: back at its sign-in form, where it signs in',
    'spa-reset-elsewhere@example.com',
    spaWaitingOnReset,
    async (spa) => {
      // Whoever asked for the link is not signed in by the mailbox's owner saving a password.
      const other = await browser()
      const tab = await newPassword(other, spa.link, 'remembered password 3')
      await tab.getByText('sign in with it there').waitFor()
      await spa.page.getByRole('heading', { name: 'Sign in' }).waitFor()
      await spa.page.getByLabel('Email').fill('spa-reset-elsewhere@example.com')
      await spa.page.getByLabel('Password').fill('remembered password 3')
      await spa.page.getByRole('button', { name: 'Sign in' }).click()
      await spa.signedIn('spa-reset-elsewhere@example.com')
      await other.close()
    },
  )
})
