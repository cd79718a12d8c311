import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { rmSync } from 'node:fs'
import type { ParsedMail } from 'mailparser'
import * as oidc from 'openid-client'
import { Agent } from './support/browserless'
import { tempDir } from './support/core'
import { activeWorkspace, pkceAuthorization, registerApp } from './support/instances'
import { startTestServer, type TestServer } from './support/server'
import { type SmtpSink, startSmtpServer } from './support/smtp'
import { deviceTokens, type PlatformUser, signUpEndUser, signUpUser } from './support/users'

// A password reset ends what the old password opened (issue 8, item 6): dashboard sessions,
// instance sessions, refresh tokens and grants, and platform access tokens already issued.

let smtp: SmtpSink
let server: TestServer
const dataDir = tempDir()
const RP = 'https://rp.example.com'
const isDashboard = (u: URL) => u.pathname.startsWith('/app/')

beforeAll(async () => {
  smtp = await startSmtpServer()
  server = await startTestServer({ SMTP_URL: smtp.url }, dataDir)
})
afterAll(async () => {
  await server.stop()
  await smtp.close()
  rmSync(dataDir, { recursive: true, force: true })
})

const publicClient = (issuer: string, clientId: string) =>
  oidc.discovery(new URL(issuer), clientId, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] })

/** The OAuth error a refresh answers, or `ok`. */
async function refreshOutcome(config: oidc.Configuration, refreshToken: string): Promise<string> {
  try {
    await oidc.refreshTokenGrant(config, refreshToken)
    return 'ok'
  } catch (e) {
    return (e as { error?: string }).error ?? String(e)
  }
}

const me = (headers: Record<string, string>, agent?: Agent) =>
  agent ? agent.request('/v1/auth/me', { headers }) : fetch(`${server.baseUrl}/v1/auth/me`, { headers })

const recipients = (mail: ParsedMail) =>
  [mail.to ?? []].flat().flatMap((a) => a.value.map((v) => v.address?.toLowerCase()))

/** "Forgot password" on an instance's hosted pages, the mailed link, a new password. */
async function resetPassword(instancePath: string, email: string, password: string) {
  const browser = new Agent(server.baseUrl)
  const forgot = await browser.follow(`${instancePath}/forgot-password`)
  await browser.submit(await forgot.res.text(), forgot.url, '/forgot-password', { email })
  const mail = await smtp.waitFor((m) => m.subject === 'Reset your password' && recipients(m).includes(email))
  const link = mail.text?.match(/https?:\/\/\S+/)?.[0]
  expect(link).toContain('/reset-password?token=')
  const page = await browser.follow(link!)
  const done = await browser.submit(await page.res.text(), page.url, '/reset-password', { password })
  expect(await done.res.text()).toContain('Password changed')
}

describe('a password reset of a platform account', () => {
  const person = { email: 'lin@example.com', password: 'first password 1', name: 'Lin' }
  let user: PlatformUser
  let cli: oidc.Configuration
  let bearer: string
  let refreshToken: string

  beforeAll(async () => {
    user = await signUpUser(server, person)
    const tokens = await deviceTokens(server, user.agent)
    bearer = tokens.access_token
    cli = await publicClient(`${server.baseUrl}/i/platform`, 'gatehouse-cli')
    // The refresh token works before the reset (and rotates).
    const refreshed = await oidc.refreshTokenGrant(cli, tokens.refresh_token!)
    refreshToken = refreshed.refresh_token!
    expect((await me({}, user.agent)).status).toBe(200)
    expect((await me({ authorization: `Bearer ${bearer}` })).status).toBe(200)
    await resetPassword('/i/platform', person.email, 'second password 2')
  })

  it('ends the dashboard session', async () => {
    expect((await me({}, user.agent)).status).toBe(401)
    const app = await user.agent.request('/app/')
    expect(app.status).toBeGreaterThanOrEqual(300)
    expect(app.status).toBeLessThan(400)
  })

  it('refuses the bearer token issued before', async () => {
    const res = await me({ authorization: `Bearer ${bearer}` })
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toContain('invalid_token')
  })

  it('revokes the refresh token', async () => {
    expect(await refreshOutcome(cli, refreshToken)).toBe('invalid_grant')
  })

  it('ends the platform instance session: the old browser is asked for the password', async () => {
    const again = await user.agent.follow('/v1/auth/login', {}, isDashboard)
    expect(isDashboard(again.url)).toBe(false)
    expect(await again.res.text()).toContain('<h1>Sign in</h1>')
  })

  it('lets the new password sign in, and its new tokens work', async () => {
    const browser = new Agent(server.baseUrl)
    const page = await browser.follow('/v1/auth/login', {}, isDashboard)
    const wrong = await browser.submit(await page.res.text(), page.url, '/login', {
      email: person.email,
      password: person.password,
    })
    expect(wrong.res.status).toBe(401)
    const signIn = await browser.follow('/v1/auth/login', {}, isDashboard)
    const done = await browser.submit(
      await signIn.res.text(),
      signIn.url,
      '/login',
      { email: person.email, password: 'second password 2' },
      isDashboard,
    )
    expect(isDashboard(done.url)).toBe(true)
    expect((await me({}, browser)).status).toBe(200)
    const tokens = await deviceTokens(server, browser)
    expect((await me({ authorization: `Bearer ${tokens.access_token}` })).status).toBe(200)
    expect(await refreshOutcome(cli, tokens.refresh_token!)).toBe('ok')
  })
})

describe('a password reset of a workspace end user', () => {
  const person = { email: 'end@example.com', password: 'end user pass 1', name: 'End User' }
  let config: oidc.Configuration
  let browser: Agent
  let refreshToken: string

  const authorize = () => pkceAuthorization(config, `${RP}/cb`)

  beforeAll(async () => {
    const ws = await activeWorkspace(server.core)
    const app = await registerApp(server.core, ws, { type: 'spa', redirectUris: [`${RP}/cb`] })
    config = await publicClient(`${server.baseUrl}/i/${ws}`, app.clientId)
    browser = new Agent(server.baseUrl)
    const { url, verifier } = await authorize()
    const back = await signUpEndUser(browser, url, person, RP)
    const tokens = await oidc.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier })
    refreshToken = (await oidc.refreshTokenGrant(config, tokens.refresh_token!)).refresh_token!
    await resetPassword(`/i/${ws}`, person.email, 'end user pass 2')
  })

  it('revokes its refresh token', async () => {
    expect(await refreshOutcome(config, refreshToken)).toBe('invalid_grant')
  })

  it('ends its instance session: the same browser is asked for the password', async () => {
    const { url } = await authorize()
    const page = await browser.follow(url, {}, (u) => u.href.startsWith(RP))
    expect(page.url.href.startsWith(RP)).toBe(false)
    expect(await page.res.text()).toContain('<h1>Sign in</h1>')
  })
})
