import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createRemoteJWKSet, jwtVerify } from 'jose'
import * as oidc from 'openid-client'
import { Agent } from './support/browserless'
import { tempDir } from './support/core'
import { activeWorkspace, registerApp } from './support/instances'
import { freePort, startTestServer, type TestServer } from './support/server'

const RP = 'https://rp.example.com'
const atRp = (u: URL) => u.href.startsWith(RP)
const user = { email: 'ada@example.com', password: 'correct horse battery', name: 'Ada Lovelace' }

let env: Record<string, string>
let dataDir: string
let baseUrl: string
let issuer: string
let server: TestServer
let spa: { clientId: string }
let web: { clientId: string; clientSecret: string }
let browser: Agent
/** What the first server handed out, checked against the second one. */
const before = {} as {
  jwks: unknown
  idToken: string
  refreshToken: string
  sub: string
  machineJwt: string
}

const discover = (clientId: string, secret?: string) =>
  oidc.discovery(new URL(issuer), clientId, secret, secret ? oidc.ClientSecretBasic(secret) : oidc.None(), {
    execute: [oidc.allowInsecureRequests],
  })

const jwksJson = async () => (await fetch(`${issuer}/jwks`)).json()

async function pkce() {
  const verifier = oidc.randomPKCECodeVerifier()
  return { verifier, challenge: await oidc.calculatePKCECodeChallenge(verifier) }
}

beforeAll(async () => {
  // The same port, BASE_URL and DATA_DIR for both servers: only the process restarts.
  const port = await freePort()
  baseUrl = `http://127.0.0.1:${port}`
  env = { PORT: String(port), BASE_URL: baseUrl }
  dataDir = tempDir()
  server = await startTestServer(env, dataDir)
  const ws = await activeWorkspace(server.core)
  issuer = `${baseUrl}/i/${ws}`
  spa = await registerApp(server.core, ws, { type: 'spa', redirectUris: [`${RP}/cb`] })
  web = (await registerApp(server.core, ws, { type: 'web', redirectUris: [`${RP}/web-cb`] })) as typeof web

  browser = new Agent(baseUrl)
  const config = await discover(spa.clientId)
  const { verifier, challenge } = await pkce()
  const signIn = await browser.follow(
    oidc.buildAuthorizationUrl(config, {
      redirect_uri: `${RP}/cb`,
      scope: 'openid email profile offline_access',
      prompt: 'consent',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }),
    {},
    atRp,
  )
  const href = (await signIn.res.text()).match(/href="([^"]*\/signup)"/)![1]!
  const page = await browser.follow(new URL(href, signIn.url))
  const back = await browser.submit(await page.res.text(), page.url, '/signup', user, atRp)
  const tokens = await oidc.authorizationCodeGrant(config, back.url, {
    pkceCodeVerifier: verifier,
    idTokenExpected: true,
  })
  before.idToken = tokens.id_token!
  before.refreshToken = tokens.refresh_token!
  before.sub = tokens.claims()!.sub
  before.machineJwt = (
    await oidc.clientCredentialsGrant(await discover(web.clientId, web.clientSecret))
  ).access_token
  before.jwks = await jwksJson()

  await server.stop()
  server = await startTestServer(env, dataDir)
})
afterAll(() => server.stop())

describe('a restart with the same DATA_DIR', () => {
  it('serves the identical JWKS', async () => {
    expect(server.port).toBe(Number(env.PORT))
    expect(server.core.config.baseUrl).toBe(baseUrl)
    const jwks = (await jwksJson()) as { keys: { kid: string }[] }
    expect(jwks.keys).toHaveLength(2)
    expect(jwks).toEqual(before.jwks as typeof jwks)
  })

  it('still verifies the JWT access token and the id_token issued before it', async () => {
    const keys = createRemoteJWKSet(new URL(`${issuer}/jwks`))
    const machine = await jwtVerify(before.machineJwt, keys, { issuer, audience: issuer, typ: 'at+jwt' })
    expect(machine.payload.client_id).toBe(web.clientId)
    const id = await jwtVerify(before.idToken, keys, { issuer, audience: spa.clientId })
    expect(id.payload.sub).toBe(before.sub)
  })

  it('accepts the refresh token issued before it', async () => {
    const config = await discover(spa.clientId)
    const refreshed = await oidc.refreshTokenGrant(config, before.refreshToken)
    expect(refreshed.refresh_token).toBeTruthy()
    expect(refreshed.refresh_token).not.toBe(before.refreshToken)
    const info = await oidc.fetchUserInfo(config, refreshed.access_token, before.sub)
    expect(info).toMatchObject({ sub: before.sub, email: user.email })
  })

  it('keeps the instance session: the same browser gets a code without a password', async () => {
    expect(browser.cookie('_session')).toBeTruthy()
    const config = await discover(spa.clientId)
    const { verifier, challenge } = await pkce()
    const back = await browser.follow(
      oidc.buildAuthorizationUrl(config, {
        redirect_uri: `${RP}/cb`,
        scope: 'openid email',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }),
      {},
      atRp,
    )
    expect(back.url.href).toStartWith(`${RP}/cb?`)
    expect(back.url.searchParams.get('code')).toBeTruthy()
    const tokens = await oidc.authorizationCodeGrant(config, back.url, {
      pkceCodeVerifier: verifier,
      idTokenExpected: true,
    })
    expect(tokens.claims()?.sub).toBe(before.sub)
  })
})
