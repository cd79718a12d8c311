import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import * as oidc from 'openid-client'
import { Secret, TOTP } from 'otpauth'
import type { BrowserContext, Page } from 'playwright-core'
import { createLoginPolicyService } from '../src/features/login-policy/service'
import type { Workspace } from '../src/features/workspaces/service'
import { signUp } from '../src/identity'
import { setPassword } from '../src/identity/accounts'
import { identityExtensions } from '../src/server'
import { ManualClock } from '../src/shared/clock'
import { sharedBrowser, signUpInBrowser } from './support/browser'
import { TEST_ACTOR } from './support/core'
import { activeWorkspace, pkceAuthorization, publicClient } from './support/instances'
import { setPolicy } from './support/policy'
import { freePort, startTestServer, type TestServer } from './support/server'

// MFA on a workspace's hosted pages, in Chromium. The server runs on `localhost` (a WebAuthn RP ID
// is a domain, never an IP address) with a ManualClock started at the real time: TOTP steps move
// when the test turns it.
const clock = new ManualClock(Date.now())
/** The app's redirect URI is on the test server (a 404 there is fine: the code is in the URL). */
let RP = ''
const STEP_MS = 30_000
let server: TestServer

beforeAll(async () => {
  const port = await freePort()
  server = await startTestServer({ PORT: String(port), BASE_URL: `http://localhost:${port}` }, undefined, {
    clock,
  })
  RP = `${server.baseUrl}/rp`
})
afterAll(() => server.stop())

/** A workspace with an app whose redirects the browser answers itself, and its openid-client view. */
async function workspace(mfa: 'optional' | 'required') {
  const ws = await activeWorkspace(server.core)
  await setPolicy(server, ws, { mfa })
  const { config } = await publicClient(server.core, server.baseUrl, ws, `${RP}/cb`)
  return { ws, config }
}

const browserContext = async (): Promise<BrowserContext> => (await sharedBrowser()).newContext()

/** Starts an authorization request in `page`; `finish` exchanges the code it comes back with. */
async function authorize(page: Page, config: oidc.Configuration) {
  const { url, verifier } = await pkceAuthorization(config, `${RP}/cb`, 'openid email')
  await page.goto(url.href)
  return {
    async finish(): Promise<string[]> {
      await page.waitForURL(`${RP}/**`)
      const tokens = await oidc.authorizationCodeGrant(config, new URL(page.url()), {
        pkceCodeVerifier: verifier,
      })
      return (tokens.claims()?.amr as string[] | undefined) ?? []
    },
  }
}

async function password(page: Page, user: { email: string; password: string }) {
  await page.getByLabel('Email').fill(user.email)
  await page.getByLabel('Password').fill(user.password)
  await page.getByRole('button', { name: 'Sign in' }).click()
}

const codeAt = (secret: string, at: number) =>
  new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: at })

describe('mfa: required on a workspace', () => {
  it('has a new user enrol TOTP before any code is issued, then asks for a code on every sign-in; replayed and reused codes are refused', async () => {
    const { ws, config } = await workspace('required')
    const user = { email: 'grace@example.com', password: 'correct horse battery', name: 'Grace' }
    await signUp(server.core, ws, user)

    // First sign-in: the password is right, and the user must enrol before going back to the app.
    const context = await browserContext()
    const page = await context.newPage()
    const first = await authorize(page, config)
    await password(page, user)
    await page.getByRole('heading', { name: 'Set up two-step verification' }).waitFor()
    expect(page.url()).toContain('/mfa')
    expect(await page.locator('.qr svg path').count()).toBeGreaterThan(0)
    const secret = (await page.locator('#totp-secret').textContent())?.trim() ?? ''
    expect(secret).toMatch(/^[A-Z2-7]{32}$/)
    // A wrong code does not turn it on.
    await page.getByLabel('Code from the app').fill(codeAt(secret, clock.now() - 10 * STEP_MS))
    await page.getByRole('button', { name: 'Turn on' }).click()
    await page.getByText('That code is not right').waitFor()
    expect(await page.locator('#totp-secret').textContent()).toBe(secret)
    const enrolCode = codeAt(secret, clock.now())
    await page.getByLabel('Code from the app').fill(enrolCode)
    await page.getByRole('button', { name: 'Turn on' }).click()
    await page.getByRole('heading', { name: 'Save your recovery codes' }).waitFor()
    const recovery = (await page.locator('#recovery-codes code').allTextContents()).map((c) => c.trim())
    expect(recovery).toHaveLength(10)
    expect(new Set(recovery).size).toBe(10)
    await page.getByRole('button', { name: 'Continue' }).click()
    expect(await first.finish()).toEqual(['pwd', 'otp'])
    await context.close()

    // Every later sign-in asks for a code. The code the enrolment used is refused (same step).
    const signInWithCode = async (code: string) => {
      const ctx = await browserContext()
      const p = await ctx.newPage()
      const flow = await authorize(p, config)
      await password(p, user)
      await p.getByRole('heading', { name: 'Two-step verification' }).waitFor()
      await p.getByLabel('Authentication code').fill(code)
      await p.getByRole('button', { name: 'Verify' }).click()
      return { ctx, p, flow }
    }
    const replay = await signInWithCode(enrolCode)
    await replay.p.getByText('That code is not right, or was used already.').waitFor()
    clock.advance(STEP_MS)
    const fresh = codeAt(secret, clock.now())
    await replay.p.getByLabel('Authentication code').fill(fresh)
    await replay.p.getByRole('button', { name: 'Verify' }).click()
    // openid-client sees what was used in the ID token.
    const amr = await replay.flow.finish()
    expect(amr).toContain('otp')
    expect(amr).toEqual(['pwd', 'otp'])
    await replay.ctx.close()

    // The same code again, on another sign-in within its window: refused.
    const again = await signInWithCode(fresh)
    await again.p.getByText('That code is not right, or was used already.').waitFor()
    // A recovery code works, once.
    await again.p.getByLabel('Authentication code').fill(recovery[0]!.toUpperCase())
    await again.p.getByRole('button', { name: 'Verify' }).click()
    expect(await again.flow.finish()).toEqual(['pwd', 'otp'])
    await again.ctx.close()
    const reused = await signInWithCode(recovery[0]!)
    await reused.p.getByText('That code is not right, or was used already.').waitFor()
    await reused.p.getByLabel('Authentication code').fill(recovery[1]!)
    await reused.p.getByRole('button', { name: 'Verify' }).click()
    expect(await reused.flow.finish()).toEqual(['pwd', 'otp'])
    await reused.ctx.close()
  })

  it('enrols a user who signs up before the sign-up signs them in', async () => {
    const { config } = await workspace('required')
    const context = await browserContext()
    const page = await context.newPage()
    const flow = await authorize(page, config)
    await signUpInBrowser(page, { name: 'Ada', email: 'ada@example.com', password: 'correct horse battery' })
    await page.getByRole('heading', { name: 'Set up two-step verification' }).waitFor()
    const secret = (await page.locator('#totp-secret').textContent())?.trim() ?? ''
    await page.getByLabel('Code from the app').fill(codeAt(secret, clock.now()))
    await page.getByRole('button', { name: 'Turn on' }).click()
    await page.getByRole('button', { name: 'Continue' }).click()
    expect(await flow.finish()).toEqual(['pwd', 'otp'])
    await context.close()
  })

  it('signs a session opened with a password alone in again, with its factor, once the policy requires MFA', async () => {
    const { ws, config } = await workspace('optional')
    const user = { email: 'ida@example.com', password: 'correct horse battery', name: 'Ida' }
    await signUp(server.core, ws, user)
    const context = await browserContext()
    const page = await context.newPage()
    const first = await authorize(page, config)
    await password(page, user)
    expect(await first.finish()).toEqual(['pwd'])
    // Still signed in: the next authorization needs no page at all.
    const again = await authorize(page, config)
    expect(await again.finish()).toEqual(['pwd'])

    await setPolicy(server, ws, { mfa: 'required' })
    // The same browser session now signs in again and enrols before any code is issued.
    const after = await authorize(page, config)
    await page.getByLabel('Password').waitFor()
    await password(page, user)
    await page.getByRole('heading', { name: 'Set up two-step verification' }).waitFor()
    const secret = (await page.locator('#totp-secret').textContent())?.trim() ?? ''
    await page.getByLabel('Code from the app').fill(codeAt(secret, clock.now()))
    await page.getByRole('button', { name: 'Turn on' }).click()
    await page.getByRole('button', { name: 'Continue' }).click()
    expect(await after.finish()).toEqual(['pwd', 'otp'])
    await context.close()
  })

  it('voids a second step waiting when the password changes meanwhile', async () => {
    const { ws, config } = await workspace('required')
    const user = { email: 'joan@example.com', password: 'correct horse battery', name: 'Joan' }
    const account = await signUp(server.core, ws, user)
    const context = await browserContext()
    const page = await context.newPage()
    await authorize(page, config)
    await password(page, user)
    await page.getByRole('heading', { name: 'Set up two-step verification' }).waitFor()
    // The owner resets the password (a reset signs out everywhere): the waiting step goes with it.
    await setPassword(server.core, identityExtensions(server.core), account, 'a brand new passphrase')
    await page.reload()
    await page.getByLabel('Password').waitFor()
    expect(page.url()).not.toContain('/mfa')
    await context.close()
  })

  it("keeps the address's failures when a second factor succeeds with the account lock off", async () => {
    const { ws, config } = await workspace('required')
    await createLoginPolicyService(server.core).update({ id: ws, state: 'active' } as Workspace, TEST_ACTOR, {
      lockout_threshold: 0,
    })
    const user = { email: 'hedy@example.com', password: 'correct horse battery', name: 'Hedy' }
    await signUp(server.core, ws, user)
    const context = await browserContext()
    const page = await context.newPage()
    const enrolled = await authorize(page, config)
    await password(page, user)
    const secret = (await page.locator('#totp-secret').textContent())?.trim() ?? ''
    await page.getByLabel('Code from the app').fill(codeAt(secret, clock.now()))
    await page.getByRole('button', { name: 'Turn on' }).click()
    await page.getByRole('button', { name: 'Continue' }).click()
    await enrolled.finish()
    await context.close()

    // Another browser: three wrong passwords, then the right one and a right code.
    const other = await browserContext()
    const p = await other.newPage()
    const flow = await authorize(p, config)
    for (let i = 0; i < 3; i++) {
      await password(p, { ...user, password: 'a wrong guess' })
      await p.getByText('Wrong email or password').waitFor()
    }
    await password(p, user)
    clock.advance(STEP_MS)
    await p.getByLabel('Authentication code').fill(codeAt(secret, clock.now()))
    await p.getByRole('button', { name: 'Verify' }).click()
    expect(await flow.finish()).toEqual(['pwd', 'otp'])
    // The per-address counter still holds the three wrong passwords: a sign-in of one's own account
    // must not wipe them (with no account lock, it is the only limit on guessing).
    const rows = await server.core.store.query<{ failures: number }>(
      'SELECT failures FROM login_throttle WHERE key = $1',
      [`ip:${ws}:127.0.0.1`],
    )
    expect(rows.map((r) => Number(r.failures))).toEqual([3])
    await other.close()
  })

  it('counts wrong codes on the account lock the password uses', async () => {
    const { ws, config } = await workspace('required')
    const user = { email: 'mallory@example.com', password: 'correct horse battery', name: 'M' }
    await signUp(server.core, ws, user)
    const context = await browserContext()
    const page = await context.newPage()
    const flow = await authorize(page, config)
    await password(page, user)
    const secret = (await page.locator('#totp-secret').textContent())?.trim() ?? ''
    await page.getByLabel('Code from the app').fill(codeAt(secret, clock.now()))
    await page.getByRole('button', { name: 'Turn on' }).click()
    await page.getByRole('button', { name: 'Continue' }).click()
    await flow.finish()
    await context.close()

    const ctx = await browserContext()
    const p = await ctx.newPage()
    await authorize(p, config)
    await password(p, user)
    for (let i = 0; i < 5; i++) {
      await p.getByLabel('Authentication code').fill('000000')
      await p.getByRole('button', { name: 'Verify' }).click()
      await p.getByText('That code is not right').waitFor()
    }
    clock.advance(STEP_MS)
    await p.getByLabel('Authentication code').fill(codeAt(secret, clock.now()))
    await p.getByRole('button', { name: 'Verify' }).click()
    await p.getByText('Too many failed sign-in attempts').waitFor()
    // The password is refused as well: one lock for the account.
    const other = await ctx.newPage()
    await authorize(other, config)
    await password(other, user)
    await other.getByText('Too many failed sign-in attempts').waitFor()
    await ctx.close()
  })
})

describe('passkeys', () => {
  it('enrols a passkey in Chromium (virtual authenticator), then signs in with it as a second factor and without a password', async () => {
    const { ws, config } = await workspace('required')
    const user = { email: 'joan@example.com', password: 'correct horse battery', name: 'Joan' }
    await signUp(server.core, ws, user)
    const context = await browserContext()
    const page = await context.newPage()
    const cdp = await context.newCDPSession(page)
    await cdp.send('WebAuthn.enable')
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
      },
    })

    // Enrolment, forced by the policy: a passkey instead of an authenticator app.
    const enrol = await authorize(page, config)
    await password(page, user)
    await page.getByRole('button', { name: 'Set up a passkey' }).click()
    // A device-bound credential (not synced): `hwk`.
    expect(await enrol.finish()).toEqual(['pwd', 'hwk'])
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId })
    expect(credentials).toHaveLength(1)
    expect(credentials[0]!.isResidentCredential).toBe(true)

    // Second factor: the password, then the passkey.
    await context.clearCookies()
    const second = await authorize(page, config)
    await password(page, user)
    await page.getByRole('heading', { name: 'Two-step verification' }).waitFor()
    expect(await page.getByLabel('Authentication code').count()).toBe(0)
    await page.getByRole('button', { name: 'Use a passkey' }).click()
    expect(await second.finish()).toEqual(['pwd', 'hwk'])

    // Password-less: the discoverable credential names the account.
    await context.clearCookies()
    const alone = await authorize(page, config)
    await page.getByRole('link', { name: 'Sign in with a passkey' }).click()
    await page.getByRole('button', { name: 'Continue with a passkey' }).click()
    expect(await alone.finish()).toEqual(['hwk'])
    const after = await cdp.send('WebAuthn.getCredentials', { authenticatorId })
    expect(after.credentials[0]!.signCount).toBeGreaterThanOrEqual(2)
    await context.close()
  })
})

describe('mfa: optional (the platform instance)', () => {
  it('lets a signed-in user turn on an authenticator app at /mfa; the next sign-in asks for a code', async () => {
    const user = { email: 'owner@example.com', password: 'correct horse battery', name: 'Owner' }
    const context = await browserContext()
    const page = await context.newPage()
    await page.goto(`${server.baseUrl}/v1/auth/login`)
    await signUpInBrowser(page, { name: user.name, email: user.email, password: user.password })
    // Optional: the sign-up goes straight on to the dashboard.
    await page.waitForURL(`${server.baseUrl}/app/**`)

    await page.goto(`${server.baseUrl}/i/platform/mfa`)
    await page.getByText('Authenticator app: off. Passkeys: 0.').waitFor()
    const secret = (await page.locator('#totp-secret').textContent())?.trim() ?? ''
    await page.getByLabel('Code from the app').fill(codeAt(secret, clock.now()))
    await page.getByRole('button', { name: 'Turn on' }).click()
    await page.getByRole('heading', { name: 'Save your recovery codes' }).waitFor()
    expect(await page.locator('#recovery-codes code').count()).toBe(10)
    await page.getByRole('link', { name: 'Done' }).click()
    await page.getByText('Authenticator app: on. Passkeys: 0.').waitFor()
    // The secret of a confirmed app is never shown again.
    expect(await page.locator('#totp-secret').count()).toBe(0)
    // A post from another site, with the user's cookies, changes nothing; without them, no account.
    const cookie = (await context.cookies(`${server.baseUrl}/i/platform/mfa`))
      .map((c) => `${c.name}=${c.value}`)
      .join('; ')
    const post = (headers: Record<string, string>) =>
      fetch(`${server.baseUrl}/i/platform/mfa`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: 'credential=%7B%7D',
      })
    expect((await post({ cookie, 'sec-fetch-site': 'cross-site' })).status).toBe(403)
    expect((await post({ cookie, origin: 'https://evil.example' })).status).toBe(403)
    expect((await post({ 'sec-fetch-site': 'same-origin' })).status).toBe(401)
    await context.close()

    clock.advance(STEP_MS)
    const again = await browserContext()
    const next = await again.newPage()
    await next.goto(`${server.baseUrl}/v1/auth/login`)
    await password(next, user)
    await next.getByRole('heading', { name: 'Two-step verification' }).waitFor()
    await next.getByLabel('Authentication code').fill(codeAt(secret, clock.now()))
    await next.getByRole('button', { name: 'Verify' }).click()
    await next.waitForURL(`${server.baseUrl}/app/**`)
    await again.close()
  })
})
