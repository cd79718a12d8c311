import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose'
import * as oidc from 'openid-client'
import { Agent } from './support/browserless'
import { activeWorkspace, registerApp } from './support/instances'
import { startTestServer, type TestServer } from './support/server'

let server: TestServer
let ws: string
let issuer: string
const RP = 'https://rp.example.com'
const user = { email: 'ada@example.com', password: 'correct horse battery', name: 'Ada Lovelace' }

beforeAll(async () => {
  server = await startTestServer()
  ws = await activeWorkspace(server.core)
  issuer = `${server.baseUrl}/i/${ws}`
})
afterAll(() => server.stop())

const discover = (clientId: string, secret: string | null) =>
  oidc.discovery(
    new URL(issuer),
    clientId,
    secret ?? undefined,
    secret ? oidc.ClientSecretBasic(secret) : oidc.None(),
    {
      execute: [oidc.allowInsecureRequests],
    },
  )

/** Runs the browser part of an authorization request with `agent`; returns the redirect back to the RP. */
async function authorize(agent: Agent, url: URL, how: 'signup' | 'signin' | 'session'): Promise<URL> {
  const stop = (u: URL) => u.href.startsWith(RP)
  const first = await agent.follow(url, {}, stop)
  if (how === 'session') return first.url
  let page = first
  if (how === 'signup') {
    const html = await page.res.text()
    expect(html).toContain('Create an account')
    page = await agent.follow(new URL(html.match(/href="([^"]*\/signup)"/)![1]!, first.url), {}, stop)
    const form = await page.res.text()
    expect(form).toContain('<label for="email">Email</label>')
    return (await agent.submit(form, page.url, '/signup', user, stop)).url
  }
  const html = await page.res.text()
  expect(html).toContain('<label for="password">Password</label>')
  return (await agent.submit(html, page.url, '/login', { email: user.email, password: user.password }, stop))
    .url
}

describe('a workspace identity instance', () => {
  it('serves discovery and JWKS at its own issuer', async () => {
    const res = await fetch(`${issuer}/.well-known/openid-configuration`)
    expect(res.status).toBe(200)
    const doc = (await res.json()) as Record<string, unknown>
    expect(doc.issuer).toBe(issuer)
    expect(doc.jwks_uri).toBe(`${issuer}/jwks`)
    expect(doc.code_challenge_methods_supported).toEqual(['S256'])
    const jwks = (await (await fetch(`${issuer}/jwks`)).json()) as { keys: Record<string, unknown>[] }
    expect(jwks.keys.map((k) => k.alg).sort()).toEqual(['ES256', 'RS256'])
    for (const k of jwks.keys) expect(k.d).toBeUndefined()
  })

  it('completes authorization code + PKCE for a spa app with openid-client: sign-up, tokens, userinfo, refresh, logout', async () => {
    const app = await registerApp(server.core, ws, {
      type: 'spa',
      redirectUris: [`${RP}/cb`],
      postLogoutRedirectUris: [`${RP}/bye`],
    })
    const config = await discover(app.clientId, null)
    const verifier = oidc.randomPKCECodeVerifier()
    const state = oidc.randomState()
    const nonce = oidc.randomNonce()
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: `${RP}/cb`,
      scope: 'openid email profile offline_access',
      prompt: 'consent',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    })
    const agent = new Agent(server.baseUrl)
    const back = await authorize(agent, url, 'signup')
    expect(back.searchParams.get('code')).toBeTruthy()

    const tokens = await oidc.authorizationCodeGrant(config, back, {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
    })
    const { payload } = await jwtVerify(tokens.id_token!, createRemoteJWKSet(new URL(`${issuer}/jwks`)), {
      issuer,
      audience: app.clientId,
    })
    expect(payload.email).toBe(user.email)
    expect(payload.nonce).toBe(nonce)

    const info = await oidc.fetchUserInfo(config, tokens.access_token, payload.sub!)
    expect(info).toMatchObject({
      sub: payload.sub,
      email: user.email,
      email_verified: false,
      name: user.name,
    })

    expect(tokens.refresh_token).toBeTruthy()
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!)
    expect(refreshed.access_token).not.toBe(tokens.access_token)
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token) // rotated for public clients

    const logout = oidc.buildEndSessionUrl(config, {
      id_token_hint: tokens.id_token!,
      post_logout_redirect_uri: `${RP}/bye`,
    })
    const page = await agent.follow(logout, {}, (u) => u.href.startsWith(RP))
    const html = await page.res.text()
    expect(html).toContain('Signing you out')
    const done = await agent.submit(html, page.url, '/session/end/confirm', { logout: 'yes' }, (u) =>
      u.href.startsWith(RP),
    )
    expect(done.url.href).toStartWith(`${RP}/bye`)
    // The instance session is gone: a new authorization request asks for credentials again.
    const again = await agent.follow(
      oidc.buildAuthorizationUrl(config, {
        redirect_uri: `${RP}/cb`,
        scope: 'openid',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      }),
    )
    expect(await again.res.text()).toContain('<h1>Sign in</h1>')
  })

  it('completes the flow for a web app with its client secret, signing in', async () => {
    const app = await registerApp(server.core, ws, { type: 'web', redirectUris: [`${RP}/web-cb`] })
    const config = await discover(app.clientId, app.clientSecret)
    const verifier = oidc.randomPKCECodeVerifier()
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: `${RP}/web-cb`,
      scope: 'openid email',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    })
    const back = await authorize(new Agent(server.baseUrl), url, 'signin')
    const tokens = await oidc.authorizationCodeGrant(config, back, {
      pkceCodeVerifier: verifier,
      idTokenExpected: true,
    })
    expect(tokens.claims()?.email).toBe(user.email)

    const wrong = await discover(app.clientId, 'not-the-secret')
    await expect(oidc.clientCredentialsGrant(wrong)).rejects.toThrow()
  })

  it('refuses a public client without PKCE', async () => {
    const app = await registerApp(server.core, ws, { type: 'spa', redirectUris: [`${RP}/cb`] })
    const url = new URL(`${issuer}/auth`)
    url.search = new URLSearchParams({
      client_id: app.clientId,
      response_type: 'code',
      scope: 'openid',
      redirect_uri: `${RP}/cb`,
    }).toString()
    const res = await fetch(url, { redirect: 'manual' })
    const location = new URL(res.headers.get('location')!)
    expect(location.href).toStartWith(`${RP}/cb`)
    expect(location.searchParams.get('error')).toBe('invalid_request')
    expect(location.searchParams.get('error_description')).toContain('PKCE')
  })

  it('issues JWT access tokens for client credentials, verifiable against JWKS', async () => {
    const app = await registerApp(server.core, ws, { type: 'web', redirectUris: [`${RP}/cb`] })
    const config = await discover(app.clientId, app.clientSecret)
    const jwks = createRemoteJWKSet(new URL(`${issuer}/jwks`))
    const plain = await oidc.clientCredentialsGrant(config)
    const { payload, protectedHeader } = await jwtVerify(plain.access_token, jwks, {
      issuer,
      audience: issuer,
    })
    expect(protectedHeader.typ).toBe('at+jwt')
    expect(payload.client_id).toBe(app.clientId)
    // No feature owns the resource servers here: any resource is accepted, for 1 h.
    const api = await oidc.clientCredentialsGrant(config, { resource: 'https://api.acme.example' })
    const claims = decodeJwt(api.access_token)
    expect(claims.aud).toBe('https://api.acme.example')
    expect(claims.exp! - claims.iat!).toBe(3600)
  })

  it('reads a token request sent with chunked framing, and refuses a body over 64 KiB with 413', async () => {
    const app = await registerApp(server.core, ws, { type: 'web', redirectUris: [`${RP}/cb`] })
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: app.clientId,
      client_secret: app.clientSecret!,
    }).toString()
    const chunked = new ReadableStream<Uint8Array>({
      start(c) {
        const bytes = new TextEncoder().encode(form)
        c.enqueue(bytes.subarray(0, 10))
        c.enqueue(bytes.subarray(10))
        c.close()
      },
    })
    const token = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: chunked,
    })
    expect(token.status).toBe(200)
    const body = (await token.json()) as { access_token: string; token_type: string }
    expect(body.token_type).toBe('Bearer')
    expect(decodeJwt(body.access_token).client_id).toBe(app.clientId)

    const huge = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `${form}&pad=${'x'.repeat(70 * 1024)}`,
    })
    expect(huge.status).toBe(413)
    expect(await huge.json()).toEqual({ detail: 'Request body too large' })
  })

  it('throttles failed sign-ins per account with a clear message', async () => {
    const app = await registerApp(server.core, ws, { type: 'spa', redirectUris: [`${RP}/cb`] })
    const config = await discover(app.clientId, null)
    const verifier = oidc.randomPKCECodeVerifier()
    const agent = new Agent(server.baseUrl)
    const start = await agent.follow(
      oidc.buildAuthorizationUrl(config, {
        redirect_uri: `${RP}/cb`,
        scope: 'openid',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      }),
    )
    let html = await start.res.text()
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) {
      const r = await agent.submit(html, start.url, '/login', {
        email: 'victim@example.com',
        password: `guess-${i}`,
      })
      statuses.push(r.res.status)
      html = await r.res.text()
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429])
    expect(html).toContain('Too many failed sign-in attempts. Try again in 15 minutes.')
  })
})

describe('sign-in throttling per client address', () => {
  const clearAddressCounts = () => server.core.store.exec("DELETE FROM login_throttle WHERE key LIKE 'ip:%'")

  it('keys the limit by the real client address and locks it after 30 failures across accounts', async () => {
    await clearAddressCounts() // earlier tests failed sign-ins from this address too
    const app = await registerApp(server.core, ws, { type: 'spa', redirectUris: [`${RP}/cb`] })
    const config = await discover(app.clientId, null)
    const agent = new Agent(server.baseUrl)
    const start = await agent.follow(
      oidc.buildAuthorizationUrl(config, {
        redirect_uri: `${RP}/cb`,
        scope: 'openid',
        code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
        code_challenge_method: 'S256',
      }),
    )
    let html = await start.res.text()
    const statuses: number[] = []
    for (let i = 0; i < 31; i++) {
      // A different account each time: only the per-address rule can lock.
      const r = await agent.submit(html, start.url, '/login', {
        email: `spray-${i}@example.com`,
        password: 'sprayed-password',
      })
      statuses.push(r.res.status)
      html = await r.res.text()
    }
    expect(statuses.slice(0, 30).every((s) => s === 401)).toBe(true)
    expect(statuses[30]).toBe(429)
    expect(html).toContain('Too many failed sign-in attempts. Try again in 15 minutes.')
    const keys = await server.core.store.query<{ key: string }>(
      "SELECT key FROM login_throttle WHERE key LIKE 'ip:%'",
    )
    expect(keys.map((k) => k.key)).toEqual([`ip:${ws}:127.0.0.1`])
    await clearAddressCounts() // leave the address unlocked for the tests after this one
  })
})

describe('the front door of the identity plane', () => {
  it('answers with X-Request-Id and writes one access-log line per request, without the query', async () => {
    const res = await fetch(`${issuer}/.well-known/openid-configuration?probe=secret-value`, {
      // A client's own id is not believed: only a trusted proxy's is (tests/trusted-proxies.test.ts).
      headers: { 'x-request-id': 'trace-identity-1' },
    })
    expect(res.status).toBe(200)
    const answered = res.headers.get('x-request-id')
    expect(answered).toMatch(/^[0-9a-f-]{36}$/)
    const missing = await fetch(`${server.baseUrl}/i/00000000-0000-4000-8000-000000000000/jwks`)
    expect(missing.status).toBe(404)
    const generated = missing.headers.get('x-request-id')
    expect(generated).toMatch(/^[0-9a-f-]{36}$/)
    const lines = server.logLines.filter((l) => l.msg === 'request' && String(l.path).startsWith('/i/'))
    expect(lines.some((l) => l.request_id === 'trace-identity-1')).toBe(false)
    expect(lines.find((l) => l.request_id === answered)).toMatchObject({
      method: 'GET',
      path: `/i/${ws}/.well-known/openid-configuration`,
      status: 200,
    })
    expect(lines.find((l) => l.request_id === generated)).toMatchObject({ status: 404 })
    expect(JSON.stringify(server.logLines)).not.toContain('secret-value')
  })
})

describe('unknown instances', () => {
  it('answers 404 for an unknown workspace id and creates no Provider', async () => {
    const providers = server.identity.pool.size
    for (const path of [
      '/i/00000000-0000-4000-8000-000000000000/.well-known/openid-configuration',
      '/i/not-a-uuid/jwks',
      '/i/11111111-2222-4333-8444-555555555555/auth?client_id=x',
    ]) {
      const res = await fetch(`${server.baseUrl}${path}`)
      expect(res.status).toBe(404)
      expect(await res.json()).toEqual({ detail: 'Identity instance not found' })
    }
    expect(server.identity.pool.size).toBe(providers)
  })
})
