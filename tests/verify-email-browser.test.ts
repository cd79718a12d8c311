import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import type { ParsedMail } from 'mailparser'
import * as oidc from 'openid-client'
import type { BrowserContext, Page } from 'playwright-core'
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

/** The app: a site of its own that answers its redirect URI with a plain page. */
const rp = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('back at the app') })
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

/** The verification link mailed to `address` (mail jobs run on the test's clock: turned by `tick`). */
async function linkTo(address: string): Promise<URL> {
  const deadline = Date.now() + 10_000
  for (;;) {
    await server.tick()
    const mail = smtp.messages.find((m) => m.subject === SUBJECT && recipients(m).includes(address))
    if (mail) return new URL(mail.text!.match(/https?:\/\/\S+/)![0])
    if (Date.now() > deadline) throw new Error(`no "${SUBJECT}" mail to ${address}`)
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
  it('opened in the browser signing in, finishes that sign-in at the app with a real code', async () => {
    const { config } = await workspace()
    const context = await browser()
    const email = 'same-browser@example.com'
    const waiting = await waitingSignUp(context, config, email)
    // The mail is opened in another tab of the same browser.
    const tab = await context.newPage()
    await tab.goto(waiting.link.href)
    expect(await waiting.claims(tab)).toMatchObject({ email, email_verified: true })
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
    await tab.getByRole('heading', { name: 'Set up two-step verification' }).waitFor()
    expect(atRp(new URL(tab.url()))).toBe(false)
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
  })
})
