import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import type { ParsedMail } from 'mailparser'
import * as oidc from 'openid-client'
import type { Page } from 'playwright-core'
import { type LoginPolicy, signUp } from '../src/identity'
import { ManualClock } from '../src/shared/clock'
import { sharedBrowser, signUpInBrowser } from './support/browser'
import { Agent } from './support/browserless'
import { activeWorkspace, publicClient } from './support/instances'
import { startTestServer, type TestServer } from './support/server'
import { type SmtpSink, startSmtpServer } from './support/smtp'
import { json, type PlatformUser, signUpUser } from './support/users'

// Every field of a workspace's login policy acts on its hosted pages. Time rules are tested by
// turning the server's clock (the throttle and the stored sessions read it), never by waiting.

const RP = 'https://rp.example.com'
const atRp = (u: URL) => u.href.startsWith(RP)
const MINUTE = 60_000

let smtp: SmtpSink
let server: TestServer
let owner: PlatformUser
const clock = new ManualClock(Date.now())

beforeAll(async () => {
  smtp = await startSmtpServer()
  server = await startTestServer({ SMTP_URL: smtp.url }, undefined, { clock })
  owner = await signUpUser(server, { email: 'owner@example.com', password: 'owner-password-1', name: 'O' })
})
afterAll(async () => {
  await server.stop()
  await smtp.close()
})
// oidc-provider reads the real time: each test starts the clock there.
beforeEach(() => clock.set(Date.now()))

/** A workspace of the owner's with `policy` (over the tests' defaults), an spa app and its client. */
async function workspace(policy: Partial<LoginPolicy>) {
  const ws = await activeWorkspace(server.core, owner.id, policy)
  const { config } = await publicClient(server.core, server.baseUrl, ws, `${RP}/cb`)
  /** A fresh authorization request (code + PKCE). */
  const authorize = async () => {
    const verifier = oidc.randomPKCECodeVerifier()
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: `${RP}/cb`,
      scope: 'openid email',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    })
    return { url, verifier }
  }
  /** The owner changes the policy through the API, as the dashboard does. */
  const patch = async (body: Record<string, unknown>) => {
    const r = await json(owner.agent, 'PATCH', `/v1/workspaces/${ws}/login-policy`, body)
    expect(r.status).toBe(200)
  }
  return { ws, config, authorize, patch }
}

/** The hosted sign-in page an authorization request lands on, with a browserless agent. */
async function signInPage(agent: Agent, url: URL) {
  const page = await agent.follow(url, {}, atRp)
  const html = await page.res.text()
  expect(html).toContain('<h1>Sign in</h1>')
  return { url: page.url, html }
}

const recipients = (mail: ParsedMail) =>
  [mail.to ?? []].flat().flatMap((a) => a.value.map((v) => v.address?.toLowerCase()))

/** The mails to `address` with `subject`, once there are `n` of them (jobs run by turning nothing). */
async function mailsTo(address: string, subject: string, n: number): Promise<ParsedMail[]> {
  const deadline = Date.now() + 10_000
  for (;;) {
    await server.tick()
    const found = smtp.messages.filter((m) => m.subject === subject && recipients(m).includes(address))
    if (found.length >= n) return found
    if (Date.now() > deadline) throw new Error(`${found.length} of ${n} mails "${subject}" to ${address}`)
    await Bun.sleep(20)
  }
}

const linkIn = (mail: ParsedMail) => new URL(mail.text!.match(/https?:\/\/\S+/)![0])

/** A Chromium page on which the app's redirect URI answers a plain page (the browser never leaves). */
async function chromiumPage(): Promise<Page> {
  const context = await (await sharedBrowser()).newContext()
  const page = await context.newPage()
  await page.route(`${RP}/**`, (route) => route.fulfill({ status: 200, body: 'back at the app' }))
  return page
}

describe('allow_registration', () => {
  it('false: no sign-up link, and the sign-up page and its POST answer 403; true again: sign-up works', async () => {
    const { ws, authorize, patch } = await workspace({ allowRegistration: false })
    const page = await chromiumPage()
    await page.goto((await authorize()).url.href)
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    expect(await page.getByRole('link', { name: 'Create an account' }).count()).toBe(0)
    const signUpUrl = `${page.url()}/signup`
    const refused = await page.goto(signUpUrl)
    expect(refused?.status()).toBe(403)
    await page.getByText('This workspace does not allow new accounts to sign up.').waitFor()
    expect(await page.getByLabel('Password').count()).toBe(0)

    // The POST too, whatever the form would have been.
    const agent = new Agent(server.baseUrl)
    const signIn = await signInPage(agent, (await authorize()).url)
    const post = await agent.request(new URL(`${signIn.url.pathname}/signup`, server.baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        email: 'new@example.com',
        password: 'a long password 1',
        name: 'N',
      }).toString(),
    })
    expect(post.status).toBe(403)
    const accounts = await server.core.store.query('SELECT id FROM accounts WHERE instance_id = $1', [ws])
    expect(accounts).toEqual([])

    // Turned back on through the API: the same page shows the link at once.
    await patch({ allow_registration: true })
    await page.goto((await authorize()).url.href)
    await signUpInBrowser(page, { email: 'new@example.com', password: 'a long password 1' })
    await page.waitForURL(/^https:\/\/rp\.example\.com\/cb\?code=/)
    await page.context().close()
  }, 60_000)
})

describe('lockout_threshold and lockout_minutes', () => {
  it('lock the account after the threshold of failures, and lift the lock after the minutes', async () => {
    const { ws, authorize } = await workspace({ lockoutThreshold: 3, lockoutMinutes: 10 })
    const user = { email: 'grace@example.com', password: 'cobol-compiler-1959' }
    await signUp(server.core, ws, user)
    const page = await chromiumPage()
    await page.goto((await authorize()).url.href)
    const attempt = async (password: string) => {
      await page.getByLabel('Email').fill(user.email)
      await page.getByLabel('Password').fill(password)
      await page.getByRole('button', { name: 'Sign in' }).click()
    }
    for (let i = 0; i < 3; i++) {
      await attempt('wrong password')
      await page.getByText('Wrong email or password.').waitFor()
    }
    // Locked: even the right password is refused, for the policy's minutes.
    await attempt(user.password)
    await page.getByText('Too many failed sign-in attempts. Try again in 10 minutes.').waitFor()
    clock.advance(9 * MINUTE)
    await attempt(user.password)
    await page.getByText('Too many failed sign-in attempts. Try again in 1 minute.').waitFor()
    clock.advance(MINUTE + 1000)
    await attempt(user.password)
    await page.waitForURL(/^https:\/\/rp\.example\.com\/cb\?code=/)
    await page.context().close()
  }, 60_000)

  it('0 never locks an account (the per-address limit still stands)', async () => {
    const { ws, authorize } = await workspace({ lockoutThreshold: 0 })
    const user = { email: 'alan@example.com', password: 'enigma-bombe-1940' }
    await signUp(server.core, ws, user)
    const agent = new Agent(server.baseUrl)
    const signIn = await signInPage(agent, (await authorize()).url)
    const action = /<form method="post" action="([^"]*\/login)"/.exec(signIn.html)![1]!
    const post = (password: string) =>
      agent.follow(
        new URL(action.replace(/&amp;/g, '&'), signIn.url),
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ email: user.email, password }).toString(),
        },
        atRp,
      )
    for (let i = 0; i < 8; i++) expect((await post('wrong password')).res.status).toBe(401)
    expect(atRp((await post(user.password)).url)).toBe(true)
  })
})

describe('password_min_length', () => {
  it('is the rule of sign-up: shown by the field, enforced by the POST', async () => {
    const { authorize } = await workspace({ passwordMinLength: 12 })
    const agent = new Agent(server.baseUrl)
    const signIn = await signInPage(agent, (await authorize()).url)
    const form = await agent.follow(new URL(`${signIn.url.pathname}/signup`, server.baseUrl))
    const html = await form.res.text()
    expect(html).toContain('minlength="12"')
    expect(html).toContain('At least 12 characters.')
    const short = await agent.submit(html, form.url, '/signup', {
      email: 'k@example.com',
      password: '11-chars-xx',
    })
    expect(short.res.status).toBe(422)
    expect(await short.res.text()).toContain('Use at least 12 characters.')
    const ok = await agent.submit(
      html,
      form.url,
      '/signup',
      { email: 'k@example.com', password: '12-chars-xxx' },
      atRp,
    )
    expect(ok.url.searchParams.get('code')).toBeTruthy()
  })

  it('is the rule of a password reset: shown by the field, enforced by the POST', async () => {
    const { ws } = await workspace({ passwordMinLength: 14 })
    const user = { email: 'reset@example.com', password: 'first-password-1' }
    await signUp(server.core, ws, user)
    const agent = new Agent(server.baseUrl)
    const forgot = await agent.follow(`/i/${ws}/forgot-password`)
    await agent.submit(await forgot.res.text(), forgot.url, '/forgot-password', { email: user.email })
    const [mail] = await mailsTo(user.email, 'Reset your password', 1)
    const page = await agent.follow(linkIn(mail!))
    const html = await page.res.text()
    expect(html).toContain('minlength="14"')
    expect(html).toContain('At least 14 characters.')
    const short = await agent.submit(html, page.url, '/reset-password', { password: '13-characters' })
    expect(short.res.status).toBe(422)
    expect(await short.res.text()).toContain('Use at least 14 characters.')
    const ok = await agent.submit(html, page.url, '/reset-password', { password: '14-characters!' })
    expect(ok.res.status).toBe(200)
    expect(await ok.res.text()).toContain('Password changed')
  })
})

describe('require_email_verification', () => {
  it('true: sign-up ends on the verify page with no code; the mailed link verifies, then sign-in goes on', async () => {
    const { authorize, config } = await workspace({ requireEmailVerification: true })
    const user = { email: 'verify-me@example.com', password: 'verify-me-please-1', name: 'V' }
    const agent = new Agent(server.baseUrl)
    const { url, verifier } = await authorize()
    const signIn = await signInPage(agent, url)
    const form = await agent.follow(new URL(`${signIn.url.pathname}/signup`, server.baseUrl))
    const pending = await agent.submit(await form.res.text(), form.url, '/signup', user, atRp)
    expect(atRp(pending.url)).toBe(false)
    expect(pending.res.status).toBe(200)
    const html = await pending.res.text()
    expect(html).toContain('<h1>Check your email</h1>')
    expect(html).toContain(user.email)
    const [first] = await mailsTo(user.email, 'Verify your email address', 1)

    // "Send a new link" mails another, for this interaction's account only.
    const resent = await agent.submit(html, pending.url, '/verify', {})
    expect(resent.res.status).toBe(200)
    expect(await resent.res.text()).toContain('We sent a new link.')
    const mails = await mailsTo(user.email, 'Verify your email address', 2)
    expect(linkIn(mails[1]!).href).not.toBe(linkIn(first!).href)

    // Signing in before verifying still issues no code, nor does the page's "continue" button.
    const early = await agent.submit(signIn.html, signIn.url, '/login', user, atRp)
    expect(atRp(early.url)).toBe(false)
    expect(await early.res.text()).toContain('<h1>Check your email</h1>')
    const proceed = new URL(
      html.match(/<a href="([^"]+)">I have verified my email/)![1]!.replace(/&amp;/g, '&'),
      pending.url,
    )
    const notYet = await agent.follow(proceed, {}, atRp)
    expect(atRp(notYet.url)).toBe(false)
    expect(await notYet.res.text()).toContain('Your email is not verified yet.')

    const verified = await new Agent(server.baseUrl).follow(linkIn(mails[1]!))
    expect(await verified.res.text()).toContain('<h1>Email verified</h1>')
    // Back on the first tab, without script: "continue" goes on with the same request.
    const back = await agent.follow(proceed, {}, atRp)
    expect(atRp(back.url)).toBe(true)
    const tokens = await oidc.authorizationCodeGrant(config, back.url, { pkceCodeVerifier: verifier })
    expect(tokens.claims()).toMatchObject({ email: user.email, email_verified: true })
  })

  it('true: an existing unverified user signing in is sent to the verify page and mailed a link', async () => {
    const { ws, authorize } = await workspace({ requireEmailVerification: true })
    const user = { email: 'old-unverified@example.com', password: 'old-unverified-1' }
    await signUp(server.core, ws, user)
    const agent = new Agent(server.baseUrl)
    const signIn = await signInPage(agent, (await authorize()).url)
    const pending = await agent.submit(signIn.html, signIn.url, '/login', user, atRp)
    expect(atRp(pending.url)).toBe(false)
    expect(await pending.res.text()).toContain('<h1>Check your email</h1>')
    const [mail] = await mailsTo(user.email, 'Verify your email address', 1)
    // The link leads back into this sign-in, where its browser's cookie is sent.
    expect(linkIn(mail!).pathname).toBe(`${signIn.url.pathname}/verify-email`)
  })

  it('false: an unverified user signs in as before', async () => {
    const { ws, authorize } = await workspace({ requireEmailVerification: false })
    const user = { email: 'unverified-ok@example.com', password: 'unverified-ok-1' }
    await signUp(server.core, ws, user)
    const agent = new Agent(server.baseUrl)
    const signIn = await signInPage(agent, (await authorize()).url)
    const back = await agent.submit(signIn.html, signIn.url, '/login', user, atRp)
    expect(back.url.searchParams.get('code')).toBeTruthy()
  })
})

describe('allow_password', () => {
  it('false: no password form, and the password POST, sign-up and reset are refused', async () => {
    const { ws, authorize } = await workspace({ allowPassword: false })
    const user = { email: 'no-pass@example.com', password: 'no-pass-allowed-1' }
    await signUp(server.core, ws, user)
    const agent = new Agent(server.baseUrl)
    const page = await agent.follow((await authorize()).url, {}, atRp)
    const html = await page.res.text()
    expect(html).toContain('<h1>Sign in</h1>')
    expect(html).not.toContain('type="password"')
    expect(html).not.toContain('/signup')
    expect(html).toContain('you sign in through an external identity provider')
    const post = await agent.follow(
      new URL(`${page.url.pathname}/login`, server.baseUrl),
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(user).toString(),
      },
      atRp,
    )
    expect(post.res.status).toBe(403)
    expect(atRp(post.url)).toBe(false)
    expect((await agent.follow(new URL(`${page.url.pathname}/signup`, server.baseUrl))).res.status).toBe(403)
    expect((await agent.follow(`/i/${ws}/forgot-password`)).res.status).toBe(403)
  })
})

describe('session_lifetime_hours', () => {
  it("is the instance's session lifetime: a sign-in is reused within it, and asked for again after it", async () => {
    const { ws, authorize } = await workspace({ sessionLifetimeHours: 2 })
    const user = { email: 'sso@example.com', password: 'single-sign-on-1' }
    await signUp(server.core, ws, user)
    const signedIn = async () => {
      const agent = new Agent(server.baseUrl)
      const signIn = await signInPage(agent, (await authorize()).url)
      expect(atRp((await agent.submit(signIn.html, signIn.url, '/login', user, atRp)).url)).toBe(true)
      return agent
    }
    const [first, second] = [await signedIn(), await signedIn()]

    clock.advance(119 * MINUTE)
    const reused = await first.follow((await authorize()).url, {}, atRp)
    expect(reused.url.searchParams.get('code')).toBeTruthy()

    // The other browser's session, unused since, is over after 2 hours.
    clock.advance(2 * MINUTE)
    const expired = await second.follow((await authorize()).url, {}, atRp)
    expect(atRp(expired.url)).toBe(false)
    expect(await expired.res.text()).toContain('<h1>Sign in</h1>')
  })
})
