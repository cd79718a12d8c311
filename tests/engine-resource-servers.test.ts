import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createRemoteJWKSet, jwtVerify } from 'jose'
import * as oidc from 'openid-client'
import { type Extending, issuerFor, PLATFORM, platformClient, signUp } from '../src/identity'
import { Agent } from './support/browserless'
import { activeWorkspace, registerApp } from './support/instances'
import { startTestServer, type TestServer } from './support/server'

// Issue 59: a feature's resource servers (RFC 8707). A throwaway feature ("things") knows one API
// of workspace A's instance and answers nothing of workspace B's (the engine's default there); what
// it answers for a few other resources of A is malformed, as a feature's bug would be. Real OIDC
// flows through HTTP; the platform instance is never asked.

const API = 'https://api.example.com'
const REDIRECT_URI = 'https://rp.example.com/cb'
const PASSWORD = 'correct horse battery'
/** What the source answers for A's resources; any other resource of A is refused (null). */
const answers: Record<string, unknown> = {
  [API]: { scopes: ['read:things'], accessTokenTTL: 300 },
  'https://short.example.com': { scopes: ['read:things'], accessTokenTTL: 59 },
  'https://long.example.com': { scopes: ['read:things'], accessTokenTTL: 86_401 },
  'https://fraction.example.com': { scopes: ['read:things'], accessTokenTTL: 300.5 },
  'https://spaced.example.com': { scopes: ['read things'], accessTokenTTL: 300 },
  'https://scope-text.example.com': { scopes: 'read:things', accessTokenTTL: 300 },
  'https://audience.example.com': { scopes: [], accessTokenTTL: 300, audience: 'https://other.example' },
  'https://later.example.com': Promise.resolve({ scopes: ['read:things'], accessTokenTTL: 300 }),
  'https://string.example.com': 'yes',
}
/** The instances the source was asked for, in order. */
const asked: string[] = []

const things: Extending = {
  name: 'things',
  identity: () => ({
    resourceServers: (instance, resource) => {
      asked.push(instance.id)
      if (instance.id !== wsA) return undefined
      return (answers[resource] ?? null) as never
    },
  }),
}

let server: TestServer
let wsA: string
let issuerA: string
let issuerB: string

beforeAll(async () => {
  server = await startTestServer({}, undefined, { identity: [things] })
  wsA = await activeWorkspace(server.core)
  issuerA = issuerFor(server.core.config, wsA)
  issuerB = issuerFor(server.core.config, await activeWorkspace(server.core))
})
afterAll(() => server.stop())

/** A confidential app of the instance at `issuer`, and its token request with `params`. */
async function webApp(issuer: string) {
  const ws = issuer.slice(issuer.lastIndexOf('/') + 1)
  const app = await registerApp(server.core, ws, { type: 'web', redirectUris: [REDIRECT_URI] })
  const token = (params: Record<string, string>) =>
    fetch(`${issuer}/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${btoa(`${app.clientId}:${app.clientSecret}`)}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams(params).toString(),
    })
  return { app, token }
}

/** An access token's claims, once verified against the issuer's JWKS as an ES256 JWT for `audience`. */
async function verified(issuer: string, accessToken: string, audience: string) {
  const { payload, protectedHeader } = await jwtVerify(
    accessToken,
    createRemoteJWKSet(new URL(`${issuer}/jwks`)),
    { issuer, audience },
  )
  expect(protectedHeader).toMatchObject({ alg: 'ES256', typ: 'at+jwt' })
  return payload
}

describe("a feature's resource server, on client credentials", () => {
  it('issues a JWT for it with its audience, its TTL and its scopes', async () => {
    const { app, token } = await webApp(issuerA)
    const answer = await token({ grant_type: 'client_credentials', resource: API, scope: 'read:things' })
    expect(answer.status).toBe(200)
    const body = await answer.json()
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 300, scope: 'read:things' })
    const claims = await verified(issuerA, body.access_token, API)
    expect(claims.aud).toBe(API)
    expect(claims.exp! - claims.iat!).toBe(300)
    expect(claims).toMatchObject({ client_id: app.clientId, scope: 'read:things' })
  })

  it('refuses a resource the source refuses with invalid_target', async () => {
    const { token } = await webApp(issuerA)
    const answer = await token({ grant_type: 'client_credentials', resource: 'https://unknown.example.com' })
    expect(answer.status).toBe(400)
    expect((await answer.json()).error).toBe('invalid_target')
  })

  it("keeps the instance's own audience (1 h) without a resource, without asking the source", async () => {
    const { token } = await webApp(issuerA)
    const before = asked.length
    const answer = await token({ grant_type: 'client_credentials' })
    expect(answer.status).toBe(200)
    const claims = await verified(issuerA, (await answer.json()).access_token, issuerA)
    expect(claims.exp! - claims.iat!).toBe(3600)
    expect(asked.length).toBe(before)
  })

  it("keeps the engine's default where the source answers nothing: any resource, 1 h", async () => {
    const { token } = await webApp(issuerB)
    const answer = await token({ grant_type: 'client_credentials', resource: API })
    expect(answer.status).toBe(200)
    const body = await answer.json()
    expect(body.expires_in).toBe(3600)
    const claims = await verified(issuerB, body.access_token, API)
    expect(claims.exp! - claims.iat!).toBe(3600)
    expect(asked).toContain(issuerB.slice(issuerB.lastIndexOf('/') + 1))
  })

  it('fails with server_error and issues no token when the source answers out of bounds or malformed', async () => {
    const { token } = await webApp(issuerA)
    const malformed = Object.keys(answers).filter((resource) => resource !== API)
    for (const resource of malformed) {
      const answer = await token({ grant_type: 'client_credentials', resource, scope: 'read:things' })
      const body = await answer.json()
      expect({ resource, status: answer.status, body }).toEqual({
        resource,
        status: 500,
        body: { error: 'server_error', error_description: expect.not.stringContaining('source') },
      })
    }
    // The feature's bug is told to the operator, not to the client.
    const failures = server.logLines.map((line) => String(line.exception))
    for (const resource of malformed)
      expect(failures).toContainEqual(
        expect.stringContaining(`the resource servers source answered ${resource} with`),
      )
  })
})

describe("a feature's resource server, on authorization code", () => {
  /** A browser's authorization at A with `params`, signed in as a new account: where it lands. */
  async function authorize(email: string, params: Record<string, string>) {
    const { app } = await webApp(issuerA)
    await signUp(server.core, wsA, { email, password: PASSWORD })
    const config = await oidc.discovery(
      new URL(issuerA),
      app.clientId,
      undefined,
      oidc.ClientSecretBasic(app.clientSecret!),
      { execute: [oidc.allowInsecureRequests] },
    )
    const verifier = oidc.randomPKCECodeVerifier()
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      ...params,
    })
    const agent = new Agent(server.baseUrl)
    const atRp = (u: URL) => u.href.startsWith(REDIRECT_URI)
    const form = await agent.follow(url, {}, atRp)
    if (atRp(form.url)) return { landed: form.url, config, verifier }
    const html = await form.res.text()
    const done = await agent.submit(html, form.url, '/login', { email, password: PASSWORD }, atRp)
    return { landed: done.url, config, verifier }
  }

  it('issues the access token for the resource asked, with its TTL and its scopes', async () => {
    const { landed, config, verifier } = await authorize('code@example.com', {
      scope: 'openid email read:things',
      resource: API,
    })
    const tokens = await oidc.authorizationCodeGrant(
      config,
      landed,
      { pkceCodeVerifier: verifier },
      { resource: API },
    )
    expect(tokens.expires_in).toBe(300)
    expect(tokens.claims()?.email).toBe('code@example.com')
    const claims = await verified(issuerA, tokens.access_token, API)
    expect(claims.exp! - claims.iat!).toBe(300)
    expect(claims.scope).toBe('read:things')
  })

  it('refuses an authorization for a resource the source refuses', async () => {
    const { landed } = await authorize('refused@example.com', {
      scope: 'openid',
      resource: 'https://unknown.example.com',
    })
    expect(landed.searchParams.get('code')).toBeNull()
    expect(landed.searchParams.get('error')).toBe('invalid_target')
  })
})

describe('the platform instance', () => {
  /** Where the platform's authorization endpoint sends a browser asking for `resource`. */
  async function platformAuthorization(resource: string) {
    const platform = platformClient(server.core)
    const url = new URL(`${platform.issuer}/auth`)
    url.search = new URLSearchParams({
      client_id: platform.clientId,
      response_type: 'code',
      redirect_uri: platform.redirectUri,
      scope: 'openid',
      resource,
    }).toString()
    return fetch(url, { redirect: 'manual' })
  }

  it('serves the control plane only, and is never asked of the source', async () => {
    const refused = await platformAuthorization(API)
    expect(refused.status).toBe(303)
    expect(new URL(refused.headers.get('location')!).searchParams.get('error')).toBe('invalid_target')
    const own = await platformAuthorization(platformClient(server.core).audience)
    expect(own.status).toBe(303)
    const location = new URL(own.headers.get('location')!, own.url)
    expect(location.searchParams.get('error')).toBeNull()
    expect(location.pathname).toStartWith(`/i/${PLATFORM}/interaction/`)
    expect(asked).not.toContain(PLATFORM)
  })
})
