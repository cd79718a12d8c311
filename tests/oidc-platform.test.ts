import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { createRemoteJWKSet, jwtVerify } from 'jose'
import * as oidc from 'openid-client'
import { accounts, platformClient } from '../src/identity'
import { Agent } from './support/browserless'
import { startTestServer, type TestServer } from './support/server'

let server: TestServer
let issuer: string
let callback: string
let signedOut: string
let config: oidc.Configuration
let consoleClientId: string

beforeAll(async () => {
  server = await startTestServer()
  issuer = `${server.baseUrl}/i/platform`
  callback = `${server.baseUrl}/v1/auth/callback`
  signedOut = `${server.baseUrl}/app/signed-out`
  const { clientId, clientSecret: secret } = platformClient(server.core)
  consoleClientId = clientId
  config = await oidc.discovery(new URL(issuer), consoleClientId, secret, oidc.ClientSecretBasic(secret), {
    execute: [oidc.allowInsecureRequests],
  })
})
afterAll(() => server.stop())

/** Signs up on the platform's hosted page; returns the redirect to the console callback, not followed. */
async function signUpAt(agent: Agent, url: URL, person: { email: string; password: string; name: string }) {
  const atCallback = (u: URL) => u.href.startsWith(callback)
  const signIn = await agent.follow(url, {}, atCallback)
  const html = await signIn.res.text()
  expect(html).toContain('<h1>Sign in</h1>')
  expect(html).toContain('<strong>Gatehouse</strong>')
  const href = html.match(/href="([^"]*\/signup)"/)![1]!
  const page = await agent.follow(new URL(href, signIn.url), {}, atCallback)
  return (await agent.submit(await page.res.text(), page.url, '/signup', person, atCallback)).url
}

const platformAdmin = async (email: string) =>
  (
    await server.core.db
      .select({ admin: accounts.isPlatformAdmin })
      .from(accounts)
      .where(and(eq(accounts.instanceId, 'platform'), eq(accounts.email, email)))
      .limit(1)
  )[0]?.admin

describe('the platform instance', () => {
  const first = { email: 'founder@example.com', password: 'founder password 1', name: 'Fay Founder' }

  it('serves discovery at issuer /i/platform', () => {
    const meta = config.serverMetadata()
    expect(meta.issuer).toBe(issuer)
    expect(meta.authorization_endpoint).toBe(`${issuer}/auth`)
    expect(meta.token_endpoint).toBe(`${issuer}/token`)
    expect(meta.jwks_uri).toBe(`${issuer}/jwks`)
    expect(meta.end_session_endpoint).toBe(`${issuer}/session/end`)
  })

  it("completes code + PKCE for the console's confidential client: sign-up, tokens, userinfo, refresh, logout", async () => {
    const verifier = oidc.randomPKCECodeVerifier()
    const state = oidc.randomState()
    const nonce = oidc.randomNonce()
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: callback,
      scope: 'openid email profile offline_access',
      prompt: 'consent',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    })
    const agent = new Agent(server.baseUrl)
    const back = await signUpAt(agent, url, first)
    expect(back.href).toStartWith(`${callback}?`)
    expect(back.searchParams.get('code')).toBeTruthy()

    const tokens = await oidc.authorizationCodeGrant(config, back, {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
    })
    const { payload } = await jwtVerify(tokens.id_token!, createRemoteJWKSet(new URL(`${issuer}/jwks`)), {
      issuer,
      audience: consoleClientId,
    })
    expect(payload).toMatchObject({ email: first.email, email_verified: false, name: first.name, nonce })
    expect(payload.sub).toStartWith('usr_')

    // No resource parameter: the access token is for the userinfo endpoint.
    const info = await oidc.fetchUserInfo(config, tokens.access_token, payload.sub!)
    expect(info).toMatchObject({ sub: payload.sub, email: first.email, name: first.name })

    expect(tokens.refresh_token).toBeTruthy()
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!)
    expect(refreshed.access_token).not.toBe(tokens.access_token)
    expect(refreshed.claims()?.sub).toBe(payload.sub)
    const again = await oidc.fetchUserInfo(config, refreshed.access_token, payload.sub!)
    expect(again.email).toBe(first.email)

    const logout = oidc.buildEndSessionUrl(config, {
      id_token_hint: tokens.id_token!,
      post_logout_redirect_uri: signedOut,
    })
    const page = await agent.follow(logout)
    const html = await page.res.text()
    expect(html).toContain('Signing you out')
    const done = await agent.submit(html, page.url, '/session/end/confirm', { logout: 'yes' })
    expect(done.url.href).toBe(signedOut)
    expect(done.res.status).toBe(200)
    expect(await done.res.text()).toContain('You are signed out')

    // The platform session is gone: a new authorization request asks for credentials again.
    const relogin = await agent.follow(
      oidc.buildAuthorizationUrl(config, {
        redirect_uri: callback,
        scope: 'openid',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      }),
      {},
      (u) => u.href.startsWith(callback),
    )
    expect(await relogin.res.text()).toContain('<h1>Sign in</h1>')
  })

  it('makes the first account to sign up the platform admin, and no later one', async () => {
    const second = { email: 'second@example.com', password: 'second password 2', name: 'Sam Second' }
    const verifier = oidc.randomPKCECodeVerifier()
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: callback,
      scope: 'openid email',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    })
    const back = await signUpAt(new Agent(server.baseUrl), url, second)
    expect(back.searchParams.get('code')).toBeTruthy()

    expect(await platformAdmin(first.email)).toBe(true)
    expect(await platformAdmin(second.email)).toBe(false)
  })
})
