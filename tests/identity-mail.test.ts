import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { and, eq, inArray } from 'drizzle-orm'
import type { ParsedMail } from 'mailparser'
import * as oidc from 'openid-client'
import { MAIL_SEND } from '../src/features/mail/jobs'
import { signUp } from '../src/identity'
import { jobs } from '../src/queue/schema'
import { Agent } from './support/browserless'
import { activeWorkspace, registerApp } from './support/instances'
import { startTestServer, type TestServer } from './support/server'
import { type SmtpSink, startSmtpServer } from './support/smtp'

let smtp: SmtpSink
let server: TestServer
let ws: string
let config: oidc.Configuration
const RP = 'https://rp.example.com'
const atRp = (u: URL) => u.href.startsWith(RP)

beforeAll(async () => {
  smtp = await startSmtpServer()
  server = await startTestServer({ SMTP_URL: smtp.url })
  ws = await activeWorkspace(server.core)
  const app = await registerApp(server.core, ws, { type: 'spa', redirectUris: [`${RP}/cb`] })
  config = await oidc.discovery(new URL(`${server.baseUrl}/i/${ws}`), app.clientId, undefined, oidc.None(), {
    execute: [oidc.allowInsecureRequests],
  })
})
afterAll(async () => {
  await server.stop()
  await smtp.close()
})

const recipients = (mail: ParsedMail) =>
  [mail.to ?? []].flat().flatMap((a) => a.value.map((v) => v.address?.toLowerCase()))

const mailTo = (address: string, subject: string) =>
  smtp.waitFor((m) => m.subject === subject && recipients(m).includes(address))

/** The one link a mail carries, as the recipient would click it. */
function linkIn(mail: ParsedMail): URL {
  const links = mail.text?.match(/https?:\/\/\S+/g) ?? []
  expect(links).toHaveLength(1)
  return new URL(links[0]!)
}

/** An href of the page by its path ending (`/signup`, `/forgot`), resolved against the page. */
function hrefTo(html: string, pageUrl: URL, ending: string): URL {
  const href = html.match(new RegExp(`href="([^"]*${ending})"`))?.[1]
  if (!href) throw new Error(`no link to ${ending} in:\n${html.slice(0, 500)}`)
  return new URL(href, pageUrl)
}

/** Starts an authorization request with `agent` and returns the hosted sign-in page it lands on. */
async function signInPage(agent: Agent) {
  const verifier = oidc.randomPKCECodeVerifier()
  const start = oidc.buildAuthorizationUrl(config, {
    redirect_uri: `${RP}/cb`,
    scope: 'openid email profile',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  })
  const page = await agent.follow(start, {}, atRp)
  const html = await page.res.text()
  expect(html).toContain('<h1>Sign in</h1>')
  return { verifier, url: page.url, html }
}

/** Follows "Create an account" from a fresh sign-in page. */
async function signUpPage(agent: Agent) {
  const signIn = await signInPage(agent)
  const page = await agent.follow(hrefTo(signIn.html, signIn.url, '/signup'))
  const html = await page.res.text()
  expect(html).toContain('<h1>Create your account</h1>')
  return { verifier: signIn.verifier, url: page.url, html }
}

const claimsOf = async (back: URL, verifier: string) =>
  (
    await oidc.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, idTokenExpected: true })
  ).claims()!

/** Resolves once no mail job is waiting or running: every mail enqueued so far has been tried. */
async function mailQueueDrained(deadlineMs = 5_000) {
  const until = Date.now() + deadlineMs
  const pending = async () =>
    (
      await server.core.db
        .select({ id: jobs.id })
        .from(jobs)
        .where(and(eq(jobs.kind, MAIL_SEND), inArray(jobs.status, ['queued', 'running'])))
    ).length
  while ((await pending()) > 0) {
    if (Date.now() > until) throw new Error(`mail jobs still pending after ${deadlineMs} ms`)
    await Bun.sleep(10)
  }
}

describe('email verification', () => {
  const ada = { email: 'ada@example.com', password: 'correct horse battery', name: 'Ada Lovelace' }

  it('mails a verification link on sign-up; following it verifies the address for later logins', async () => {
    const agent = new Agent(server.baseUrl)
    const page = await signUpPage(agent)
    const back = await agent.submit(page.html, page.url, '/signup', ada, atRp)
    expect(back.url.searchParams.get('code')).toBeTruthy()
    expect((await claimsOf(back.url, page.verifier)).email_verified).toBe(false)

    const mail = await mailTo(ada.email, 'Verify your email address')
    const link = linkIn(mail)
    expect(link.href).toStartWith(`${server.baseUrl}/i/${ws}/verify-email?token=`)
    const verified = await new Agent(server.baseUrl).follow(link)
    expect(verified.res.status).toBe(200)
    expect(await verified.res.text()).toContain('<h1>Email verified</h1>')

    // A fresh login (new browser, password) now carries the verified address.
    const other = new Agent(server.baseUrl)
    const signIn = await signInPage(other)
    const again = await other.submit(
      signIn.html,
      signIn.url,
      '/login',
      { email: ada.email, password: ada.password },
      atRp,
    )
    const tokens = await oidc.authorizationCodeGrant(config, again.url, {
      pkceCodeVerifier: signIn.verifier,
      idTokenExpected: true,
    })
    const claims = tokens.claims()!
    expect(claims).toMatchObject({ email: ada.email, email_verified: true })
    const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub)
    expect(info).toMatchObject({ email: ada.email, email_verified: true })
  })

  it('shows "Link expired" when a verification link is used a second time', async () => {
    const mail = await mailTo(ada.email, 'Verify your email address')
    const second = await new Agent(server.baseUrl).follow(linkIn(mail))
    expect(second.res.status).toBe(400)
    const html = await second.res.text()
    expect(html).toContain('<h1>Link expired</h1>')
    expect(html).not.toContain('Email verified')
  })
})

describe('password reset', () => {
  it('resets a forgotten password through the mailed link; only the new password signs in', async () => {
    const grace = { email: 'grace@example.com', old: 'old password 123', new: 'brand new password 456' }
    await signUp(server.core, ws, { email: grace.email, password: grace.old, name: 'Grace Hopper' })

    const agent = new Agent(server.baseUrl)
    const signIn = await signInPage(agent)
    // Asked from the sign-in, the reset belongs to its interaction (its link too).
    const forgot = await agent.follow(hrefTo(signIn.html, signIn.url, '/forgot'))
    const forgotHtml = await forgot.res.text()
    expect(forgotHtml).toContain('<h1>Reset your password</h1>')
    const sent = await agent.submit(forgotHtml, forgot.url, '/forgot', { email: grace.email })
    expect(sent.res.status).toBe(200)
    expect(await sent.res.text()).toContain(
      'If an account exists for that address, we sent a link to reset the password.',
    )

    const mail = await mailTo(grace.email, 'Reset your password')
    const link = linkIn(mail)
    expect(link.href).toStartWith(`${server.baseUrl}${signIn.url.pathname}/reset-password?token=`)
    const reset = await agent.follow(link)
    const resetHtml = await reset.res.text()
    expect(resetHtml).toContain('<h1>Choose a new password</h1>')
    const changed = await agent.submit(resetHtml, reset.url, '/reset-password', { password: grace.new })
    expect(changed.res.status).toBe(200)
    expect(await changed.res.text()).toContain('<h1>Password changed</h1>')

    // Back on the sign-in page of the pending authorization request.
    const refused = await agent.submit(signIn.html, signIn.url, '/login', {
      email: grace.email,
      password: grace.old,
    })
    expect(refused.res.status).toBe(401)
    const refusedHtml = await refused.res.text()
    expect(refusedHtml).toContain('Wrong email or password.')
    const back = await agent.submit(
      refusedHtml,
      refused.url,
      '/login',
      { email: grace.email, password: grace.new },
      atRp,
    )
    expect(back.url.href).toStartWith(`${RP}/cb`)
    expect(back.url.searchParams.get('code')).toBeTruthy()
    expect((await claimsOf(back.url, signIn.verifier)).email).toBe(grace.email)
  })

  it('answers an unknown address with the same notice and sends no mail', async () => {
    const known = 'known@example.com'
    const unknown = 'nobody@example.com'
    await signUp(server.core, ws, { email: known, password: 'known password 789' })
    const agent = new Agent(server.baseUrl)
    const notices: string[] = []
    for (const email of [unknown, known]) {
      const page = await agent.follow(`/i/${ws}/forgot-password`)
      const answer = await agent.submit(await page.res.text(), page.url, '/forgot-password', { email })
      expect(answer.res.status).toBe(200)
      notices.push(await answer.res.text())
    }
    expect(notices[0]).toContain(
      'If an account exists for that address, we sent a link to reset the password.',
    )
    expect(notices[0]).toBe(notices[1]!)

    // The mail asked for afterwards has arrived and no mail job is left: none went to the unknown address.
    await mailTo(known, 'Reset your password')
    await mailQueueDrained()
    expect(smtp.messages.filter((m) => recipients(m).includes(unknown))).toEqual([])
  })
})

describe('sign-up form errors', () => {
  it('shows "An account with this email already exists" inline, keeping the values', async () => {
    await signUp(server.core, ws, { email: 'taken@example.com', password: 'first owner password' })
    const agent = new Agent(server.baseUrl)
    const page = await signUpPage(agent)
    const answer = await agent.submit(page.html, page.url, '/signup', {
      email: 'Taken@Example.com',
      name: 'Second Comer',
      password: 'another long password',
    })
    expect(answer.res.status).toBe(409)
    const html = await answer.res.text()
    expect(html).toContain('<h1>Create your account</h1>')
    expect(html).toContain('An account with this email already exists')
    expect(html).toContain('value="Taken@Example.com"')
    expect(html).toContain('value="Second Comer"')
    expect(html).not.toContain('another long password')
  })

  it('shows "Use at least 8 characters." inline for a short password, keeping the values', async () => {
    const agent = new Agent(server.baseUrl)
    const page = await signUpPage(agent)
    const answer = await agent.submit(page.html, page.url, '/signup', {
      email: 'shorty@example.com',
      name: 'Shorty',
      password: 'short',
    })
    expect(answer.res.status).toBe(422)
    const html = await answer.res.text()
    expect(html).toContain('<h1>Create your account</h1>')
    expect(html).toContain('Use at least 8 characters.')
    expect(html).toContain('value="shorty@example.com"')
    expect(html).toContain('value="Shorty"')
    // The form is still live: a longer password completes the sign-up.
    const back = await agent.submit(
      html,
      answer.url,
      '/signup',
      { email: 'shorty@example.com', name: 'Shorty', password: 'long enough now' },
      atRp,
    )
    expect(back.url.searchParams.get('code')).toBeTruthy()
  })
})
