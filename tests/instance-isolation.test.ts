import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import {
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  type JSONWebKeySet,
  type JWTPayload,
  jwtVerify,
} from 'jose'
import * as oidc from 'openid-client'
import { events } from '../src/events/schema'
import { apps } from '../src/features/apps/schema'
import { signUp } from '../src/identity'
import { serving } from '../src/identity/provider'
import { PER_INSTANCE, type PerInstanceOption } from '../src/identity/provider/instance-scope'
import { newId } from '../src/shared/ids'
import { Agent } from './support/browserless'
import { callApi, type Person, person } from './support/callers'
import { activeWorkspace, pkceAuthorization, registerApp } from './support/instances'
import { startTestServer, type TestServer } from './support/server'
import type { Json } from './support/users'

// Two workspace identity instances, A and B, on one server, black-box through HTTP: nothing one
// instance issued, stored or decided is honoured by the other, one request at a time and with many in
// flight at once. One Provider serves both (provider/internals.ts): every option it serves per
// instance is listed in PER_INSTANCE (provider/instance-scope.ts), and each has its case in CASES here; an
// option without one fails the first test. Path-based issuers share a host, so one browser (an Agent)
// carries both instances' cookies.

const RP = 'https://rp.example.com'
const CB = `${RP}/cb`
const atRp = (u: URL) => u.href.startsWith(RP)
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
/** JWK members that hold private (or symmetric) key material: never in a published JWKS. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']

interface Instance {
  name: 'A' | 'B'
  id: string
  issuer: string
  /** The confidential `web` app, created through the apps API. */
  web: { clientId: string; clientSecret: string }
  /** A public `native` app that may use the device flow. */
  device: { clientId: string }
  user: { id: string; email: string; password: string }
  /** openid-client's view of the web app. */
  config: oidc.Configuration
  jwks: JSONWebKeySet
  kids: Set<string>
}

let server: TestServer
let owner: Person
let A: Instance
let B: Instance

/**
 * A workspace of `owner`'s with its web app (through the API), a device-flow app and a user. The
 * apps API has no field for extra grants (only the platform's CLI gets the device grant from code),
 * so the device app is written straight into the apps table, as the tests' `registerApp` writes apps.
 */
async function instance(name: 'A' | 'B'): Promise<Instance> {
  const id = await activeWorkspace(server.core, owner.id)
  const issuer = `${server.baseUrl}/i/${id}`
  const created = await callApi(server.baseUrl, owner, 'POST', `/v1/workspaces/${id}/apps`, {
    name: `${name} web`,
    app_type: 'web',
    redirect_uris: [CB],
  })
  if (created.status !== 201 || created.body.issuer !== issuer)
    throw new Error(`app of ${name}: ${created.status} ${JSON.stringify(created.body)}`)
  const web = { clientId: String(created.body.client_id), clientSecret: String(created.body.client_secret) }
  const device = { clientId: `device-${name.toLowerCase()}-${crypto.randomUUID()}` }
  await server.core.db.insert(apps).values({
    id: newId('app'),
    workspaceId: id,
    name: `${name} device`,
    clientId: device.clientId,
    clientSecretHash: null,
    appType: 'native',
    redirectUris: ['http://127.0.0.1/callback'],
    postLogoutRedirectUris: [],
    devMode: true,
    extraGrants: [DEVICE_GRANT],
    createdAt: server.core.clock.now(),
  })
  const email = `${name.toLowerCase()}-user@example.com`
  const password = `the password of ${name} 1`
  const account = await signUp(server.core, id, { email, password })
  const config = await oidc.discovery(
    new URL(issuer),
    web.clientId,
    web.clientSecret,
    oidc.ClientSecretBasic(web.clientSecret),
    { execute: [oidc.allowInsecureRequests] },
  )
  const jwks = (await (await fetch(`${issuer}/jwks`)).json()) as JSONWebKeySet
  const kids = new Set(jwks.keys.map((k) => String(k.kid)))
  return { name, id, issuer, web, device, user: { id: account.id, email, password }, config, jwks, kids }
}

beforeAll(async () => {
  server = await startTestServer()
  owner = await person(server.core)
  A = await instance('A')
  B = await instance('B')
})
afterAll(() => server.stop())

// ---------------------------------------------------------------------------------------------------
// HTTP helpers

const basic = (clientId: string, secret: string) =>
  `Basic ${btoa(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`)}`

/** A form POST to `url`; `auth` is a web app's credentials (client_secret_basic). */
async function post(url: string, form: Record<string, string>, auth?: Instance['web']) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { ...FORM, ...(auth ? { authorization: basic(auth.clientId, auth.clientSecret) } : {}) },
    body: new URLSearchParams(form).toString(),
  })
  const text = await res.text()
  let body: Json = text
  try {
    body = JSON.parse(text)
  } catch {}
  return { status: res.status, body, headers: res.headers }
}

/** A client-credentials token request of `client`'s web app at `at`'s token endpoint. */
const clientCredentials = (client: Instance, at: Instance) =>
  post(`${at.issuer}/token`, { grant_type: 'client_credentials' }, client.web)

/**
 * Asserts that `token` is a JWT of `home` (its kid in home's JWKS, verified under home's keys and
 * issuer, with `audience`) and that the other instance's JWKS refuses it. Returns its payload.
 */
async function expectIssuedBy(
  token: string,
  home: Instance,
  away: Instance,
  audience: string,
): Promise<JWTPayload> {
  const { kid } = decodeProtectedHeader(token)
  expect(home.kids.has(String(kid))).toBe(true)
  expect(away.kids.has(String(kid))).toBe(false)
  const { payload } = await jwtVerify(token, createLocalJWKSet(home.jwks), {
    issuer: home.issuer,
    audience,
  })
  expect(payload.iss).toBe(home.issuer)
  await expect(jwtVerify(token, createLocalJWKSet(away.jwks))).rejects.toMatchObject({
    code: 'ERR_JWKS_NO_MATCHING_KEY',
  })
  // Even told to expect the other issuer, the other instance's keys do not verify it.
  await expect(
    jwtVerify(token, createLocalJWKSet(away.jwks), { issuer: away.issuer, audience: away.issuer }),
  ).rejects.toThrow()
  return payload
}

/** Asserts a client-credentials answer of `home` for its own web app: 200 and a JWT of home's. */
async function expectOwnClientToken(res: Awaited<ReturnType<typeof post>>, home: Instance, away: Instance) {
  expect(res.status).toBe(200)
  expect(res.body.token_type).toBe('Bearer')
  const payload = await expectIssuedBy(res.body.access_token, home, away, home.issuer)
  expect(payload.aud).toBe(home.issuer)
  expect(payload.client_id).toBe(home.web.clientId)
}

/** Asserts the refusal of another instance's client: 401 invalid_client, and no token. */
function expectInvalidClient(res: Awaited<ReturnType<typeof post>>) {
  expect(res.status).toBe(401)
  expect(res.body.error).toBe('invalid_client')
  expect(res.body.access_token).toBeUndefined()
}

/** An authorization request at `inst` (code + PKCE) for its web app, with `prompt=none`. */
async function silentAuthorization(inst: Instance): Promise<URL> {
  return oidc.buildAuthorizationUrl(inst.config, {
    redirect_uri: CB,
    scope: 'openid',
    prompt: 'none',
    state: oidc.randomState(),
    code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
    code_challenge_method: 'S256',
  })
}

/** An Agent that also keeps every Set-Cookie header it received, with its attributes. */
class RecordingAgent extends Agent {
  readonly setCookies: string[] = []
  override async request(url: string | URL, init: RequestInit = {}): Promise<Response> {
    const res = await super.request(url, init)
    this.setCookies.push(...res.headers.getSetCookie())
    return res
  }
  /** The last Set-Cookie of `name` that set a value. */
  lastSet(name: string): string | undefined {
    return this.setCookies.filter((c) => c.startsWith(`${name}=`) && !c.startsWith(`${name}=;`)).at(-1)
  }
}

/**
 * Opens `url` (an authorization request) with `agent`, expects the hosted sign-in form and submits
 * it with `account`; returns where the browser ended (the app's redirect, or a page).
 */
async function signIn(agent: Agent, url: URL, account: { email: string; password: string }) {
  const page = await agent.follow(url, {}, atRp)
  const html = await page.res.text()
  expect(html).toContain('<label for="password">Password</label>')
  return agent.submit(html, page.url, '/login', { email: account.email, password: account.password }, atRp)
}

/**
 * The whole authorization code flow of `home`'s web app through the hosted pages, with every
 * artefact it yields tried at `away` and refused there; home keeps honouring them.
 */
async function codeFlow(home: Instance, away: Instance) {
  const { url, verifier } = await pkceAuthorization(home.config, CB)
  expect(url.href).toStartWith(`${home.issuer}/auth?`)
  const back = await signIn(new Agent(server.baseUrl), url, home.user)
  expect(back.url.href).toStartWith(CB)
  const code = back.url.searchParams.get('code')
  expect(code).toBeTruthy()

  // The code at away's token endpoint, with away's client and the right verifier: refused, and
  // not used up (home still redeems it).
  const codeAway = await post(
    `${away.issuer}/token`,
    { grant_type: 'authorization_code', code: code!, redirect_uri: CB, code_verifier: verifier },
    away.web,
  )
  expect(codeAway.status).toBe(400)
  expect(codeAway.body.error).toBe('invalid_grant')
  expect(codeAway.body.id_token).toBeUndefined()

  const tokens = await oidc.authorizationCodeGrant(home.config, back.url, {
    pkceCodeVerifier: verifier,
    idTokenExpected: true,
  })
  const claims = await expectIssuedBy(tokens.id_token!, home, away, home.web.clientId)
  expect(claims.aud).toBe(home.web.clientId)
  expect(claims.sub).toBe(home.user.id)
  expect(claims.email).toBe(home.user.email)
  const access = tokens.access_token
  const refresh = tokens.refresh_token
  expect(refresh).toBeTruthy()

  // userinfo: home answers for its own access token, away refuses it.
  const info = await oidc.fetchUserInfo(home.config, access, home.user.id)
  expect(info.email).toBe(home.user.email)
  const infoAway = await fetch(`${away.issuer}/me`, { headers: { authorization: `Bearer ${access}` } })
  expect(infoAway.status).toBe(401)
  expect(((await infoAway.json()) as Json).error).toBe('invalid_token')
  expect(infoAway.headers.get('www-authenticate')).toContain('invalid_token')

  // Introspection: home knows both tokens, away (with its own client) knows neither.
  const introspect = (at: Instance, token: string) =>
    post(`${at.issuer}/token/introspection`, { token }, at.web)
  const [accessHome, refreshHome, accessAway, refreshAway] = await Promise.all([
    introspect(home, access),
    introspect(home, refresh!),
    introspect(away, access),
    introspect(away, refresh!),
  ])
  expect(accessHome.status).toBe(200)
  expect(accessHome.body).toMatchObject({ active: true, client_id: home.web.clientId, sub: home.user.id })
  expect(accessHome.body.iss).toBe(home.issuer)
  expect(refreshHome.body).toMatchObject({ active: true, client_id: home.web.clientId })
  expect(accessAway).toMatchObject({ status: 200, body: { active: false } })
  expect(refreshAway).toMatchObject({ status: 200, body: { active: false } })
  expect(Object.keys(accessAway.body)).toEqual(['active'])
  expect(Object.keys(refreshAway.body)).toEqual(['active'])

  // Revocation at away: answered as for an unknown token (RFC 7009 §2.2), and it revokes nothing.
  const revoked = await post(
    `${away.issuer}/token/revocation`,
    { token: refresh!, token_type_hint: 'refresh_token' },
    away.web,
  )
  expect(revoked.status).toBe(200)
  const revokedAccess = await post(`${away.issuer}/token/revocation`, { token: access }, away.web)
  expect(revokedAccess.status).toBe(200)

  // The refresh token at away's token endpoint with away's client: invalid_grant, no token.
  const refreshedAway = await post(
    `${away.issuer}/token`,
    { grant_type: 'refresh_token', refresh_token: refresh! },
    away.web,
  )
  expect(refreshedAway.status).toBe(400)
  expect(refreshedAway.body.error).toBe('invalid_grant')
  expect(refreshedAway.body.access_token).toBeUndefined()

  // Home still honours both: the access token at userinfo, the refresh token at its token endpoint.
  expect((await oidc.fetchUserInfo(home.config, access, home.user.id)).sub).toBe(home.user.id)
  const refreshed = await oidc.refreshTokenGrant(home.config, refresh!)
  expect(refreshed.access_token).not.toBe(access)
  await expectIssuedBy(refreshed.id_token!, home, away, home.web.clientId)
  expect((await oidc.fetchUserInfo(home.config, refreshed.access_token, home.user.id)).email).toBe(
    home.user.email,
  )
}

/**
 * `n` client-credentials requests all in flight at once, cycling through A at A, B at B, A's client
 * at B and B's client at A; each is answered for the instance it was sent to.
 */
async function clientCredentialsBurst(n: number) {
  const cases = [
    { client: A, at: A },
    { client: B, at: B },
    { client: A, at: B },
    { client: B, at: A },
  ]
  const plan = Array.from({ length: n }, (_, i) => cases[i % cases.length]!)
  const answers = await Promise.all(plan.map(({ client, at }) => clientCredentials(client, at)))
  let issued = 0
  let refused = 0
  for (const [i, { client, at }] of plan.entries()) {
    const res = answers[i]!
    if (client === at) {
      await expectOwnClientToken(res, client, client === A ? B : A)
      issued++
    } else {
      expectInvalidClient(res)
      refused++
    }
  }
  expect({ issued, refused }).toEqual({ issued: n / 2, refused: n / 2 })
}

// ---------------------------------------------------------------------------------------------------
// One isolation case per option the shared Provider serves per instance (PER_INSTANCE)

/** A pair of instances of their own, for a case that changes an instance's login policy or settings. */
const freshPair = async () => [await instance('A'), await instance('B')] as const

let settingsPair: ReturnType<typeof freshPair> | undefined
/**
 * The pair the cases that change a setting of A share (each changes another, and none changes B's):
 * instances are made with their users' password hashes, a few a second on a shared machine.
 */
const changedSettingsPair = () => (settingsPair ??= freshPair())

/** The owner changes a workspace's login policy through the API, as the dashboard does. */
async function patchPolicy(inst: Instance, body: Record<string, unknown>) {
  const res = await callApi(server.baseUrl, owner, 'PATCH', `/v1/workspaces/${inst.id}/login-policy`, body)
  expect(res.status).toBe(200)
  return res.body
}

/** A fresh browser signs `inst`'s user in; returns the browser and where it ended. */
async function signInFresh(inst: Instance, scope = 'openid email') {
  const agent = new RecordingAgent(server.baseUrl)
  const { url, verifier } = await pkceAuthorization(inst.config, CB, scope)
  const end = await signIn(agent, url, inst.user)
  return { agent, end, verifier }
}

/** Seconds from now until the `expires` of the last `_session` cookie the agent was given. */
const sessionSecondsLeft = (agent: RecordingAgent) => {
  const cookie = agent.lastSet('_session')
  expect(cookie).toBeDefined()
  const expires = /expires=([^;]+)/i.exec(cookie!)?.[1]
  expect(expires).toBeDefined()
  return (Date.parse(expires!) - Date.now()) / 1000
}

/** The hosted sign-in page of a fresh authorization request at `inst`: its text and headers. */
async function signInPage(inst: Instance) {
  const { url } = await pkceAuthorization(inst.config, CB)
  const page = await new Agent(server.baseUrl).follow(url, {}, atRp)
  const html = await page.res.text()
  expect(html).toContain('<h1>Sign in</h1>')
  return { html, csp: page.res.headers.get('content-security-policy') ?? '' }
}

/** The discovery document of `inst`. */
async function discovery(inst: Instance): Promise<Json> {
  const res = await fetch(`${inst.issuer}/.well-known/openid-configuration`)
  expect(res.status).toBe(200)
  return (await res.json()) as Json
}

/** The record the pool holds of `inst` (it served a request lately). */
function held(inst: Instance) {
  const record = server.identity.pool.held(inst.id)
  expect(record?.id).toBe(inst.id)
  return record!
}

/** A web app of `inst`'s made through the apps API. */
async function newApp(inst: Instance) {
  const created = await callApi(server.baseUrl, owner, 'POST', `/v1/workspaces/${inst.id}/apps`, {
    name: 'another web app',
    app_type: 'web',
    redirect_uris: [CB],
  })
  expect(created.status).toBe(201)
  return {
    id: String(created.body.id),
    clientId: String(created.body.client_id),
    clientSecret: String(created.body.client_secret),
  }
}

const CLIENT_CREDENTIALS = { grant_type: 'client_credentials' }

/** The client ids of the Client objects an instance's record holds (its `#int.dynamicClients`). */
const clientObjectIds = (inst: Instance) =>
  [...(held(inst).clientObjects as unknown as { held: Map<string, { clientId: string }> }).held.values()].map(
    (client) => client.clientId,
  )

/** The session.ended events recorded for `inst`'s workspace. */
const sessionsEnded = (inst: Instance) =>
  server.core.db
    .select({ data: events.data })
    .from(events)
    .where(and(eq(events.workspaceId, inst.id), eq(events.type, 'session.ended')))

const CASES: Record<PerInstanceOption, () => Promise<void>> = {
  async issuer() {
    const [docA, docB] = await Promise.all([discovery(A), discovery(B)])
    expect(docA.issuer).toBe(A.issuer)
    expect(docB.issuer).toBe(B.issuer)
    const [tokenA, tokenB] = await Promise.all([clientCredentials(A, A), clientCredentials(B, B)])
    expect(decodeJwt(tokenA.body.access_token).iss).toBe(A.issuer)
    expect(decodeJwt(tokenB.body.access_token).iss).toBe(B.issuer)
  },

  async endpoints() {
    for (const [inst, other] of [
      [A, B],
      [B, A],
    ] as const) {
      const body = await discovery(inst)
      expect(JSON.stringify(body)).not.toContain(other.id)
      expect(body).toMatchObject({
        authorization_endpoint: `${inst.issuer}/auth`,
        token_endpoint: `${inst.issuer}/token`,
        userinfo_endpoint: `${inst.issuer}/me`,
        jwks_uri: `${inst.issuer}/jwks`,
        introspection_endpoint: `${inst.issuer}/token/introspection`,
        revocation_endpoint: `${inst.issuer}/token/revocation`,
        end_session_endpoint: `${inst.issuer}/session/end`,
        device_authorization_endpoint: `${inst.issuer}/device/auth`,
      })
      const urls = Object.entries(body).filter(
        ([k, v]) => (k.endsWith('_endpoint') || k.endsWith('_uri')) && typeof v === 'string',
      )
      expect(urls.length).toBeGreaterThanOrEqual(8)
      for (const [, v] of urls) expect(String(v)).toStartWith(`${inst.issuer}/`)
      // provider.urlFor, outside a request's context, in the instance's scope.
      const record = held(inst)
      expect(serving(record, () => record.provider.urlFor('token'))).toBe(`${inst.issuer}/token`)
    }
  },

  async signingKeys() {
    const [tokenA, tokenB] = await Promise.all([clientCredentials(A, A), clientCredentials(B, B)])
    await expectOwnClientToken(tokenA, A, B)
    await expectOwnClientToken(tokenB, B, A)
    expect(held(A).keystore).not.toBe(held(B).keystore)
  },

  async jwks() {
    // Both instances' JWKS, twice each, all in flight at once (they are answered from a cache).
    const asked = [A, B, A, B]
    const answers = await Promise.all(
      asked.map(async (inst) => {
        const res = await fetch(`${inst.issuer}/jwks`)
        expect(res.status).toBe(200)
        return (await res.json()) as Json
      }),
    )
    for (const [i, inst] of asked.entries()) expect(answers[i]).toEqual(inst.jwks)
    for (const inst of [A, B]) {
      expect(inst.jwks.keys.map((k) => k.alg).sort()).toEqual(['ES256', 'RS256'])
      for (const key of inst.jwks.keys) {
        expect(typeof key.kid).toBe('string')
        for (const member of PRIVATE_MEMBERS) expect(Object.keys(key)).not.toContain(member)
      }
    }
    // Disjoint kids, and disjoint key material (the public parts themselves differ).
    expect([...A.kids].filter((kid) => B.kids.has(kid))).toEqual([])
    const material = (inst: Instance) => new Set(inst.jwks.keys.map((k) => String(k.n ?? k.x)))
    const mine = material(A)
    expect([...material(B)].filter((m) => mine.has(m))).toEqual([])
  },

  async cookieKeys() {
    const agent = new RecordingAgent(server.baseUrl)
    const back = await signIn(agent, (await pkceAuthorization(A.config, CB)).url, A.user)
    expect(back.url.searchParams.get('code')).toBeTruthy()
    expect(agent.cookie('_session')).toBeTruthy()
    expect(agent.cookie('_session.sig')).toBeTruthy()
    // A's session cookie and its signature, sent as a browser would if the path did not keep them from B.
    const cookie = `_session=${agent.cookie('_session')}; _session.sig=${agent.cookie('_session.sig')}`
    const silently = async (inst: Instance) => {
      const res = await fetch(await silentAuthorization(inst), { headers: { cookie }, redirect: 'manual' })
      expect(res.status).toBe(303)
      const location = new URL(res.headers.get('location')!)
      expect(location.href).toStartWith(CB)
      // A signature that does not verify under the instance's cookie keys is cleared (Koa's cookies).
      const cleared = res.headers.getSetCookie().some((c) => c.startsWith('_session.sig=;'))
      return { location, cleared }
    }
    // Positive control: A's keys verify it, and A signs the browser in silently.
    const atA = await silently(A)
    expect(atA.location.searchParams.get('code')).toBeTruthy()
    expect(atA.cleared).toBe(false)
    // B's keys do not: the signature is refused, and nobody is signed in.
    const atB = await silently(B)
    expect(atB.cleared).toBe(true)
    expect(atB.location.searchParams.get('error')).toBe('login_required')
    expect(atB.location.searchParams.get('code')).toBeNull()
  },

  async cookiePath() {
    const agent = new RecordingAgent(server.baseUrl)
    const { url } = await pkceAuthorization(A.config, CB)
    const back = await signIn(agent, url, A.user)
    expect(back.url.searchParams.get('code')).toBeTruthy()
    // The session cookie is scoped to A's path.
    const sessionCookie = agent.lastSet('_session')
    expect(sessionCookie).toBeDefined()
    expect(sessionCookie).toMatch(new RegExp(`;\\s*path=/i/${A.id}(;|$)`, 'i'))

    // Positive control: A signs this browser in silently.
    const silentA = await agent.follow(await silentAuthorization(A), {}, atRp)
    expect(silentA.url.href).toStartWith(CB)
    expect(silentA.url.searchParams.get('error')).toBeNull()
    expect(silentA.url.searchParams.get('code')).toBeTruthy()

    // The same browser at B: login_required, no code.
    const silentB = await agent.follow(await silentAuthorization(B), {}, atRp)
    expect(silentB.url.href).toStartWith(CB)
    expect(silentB.url.searchParams.get('error')).toBe('login_required')
    expect(silentB.url.searchParams.get('code')).toBeNull()

    // Without prompt=none B asks for credentials.
    const { url: atB } = await pkceAuthorization(B.config, CB)
    const page = await agent.follow(atB, {}, atRp)
    expect(page.url.href).toStartWith(`${B.issuer}/interaction/`)
    const html = await page.res.text()
    expect(html).toContain('<h1>Sign in</h1>')
    // Signed in there too, B's session cookie is scoped to B's path.
    await agent.submit(html, page.url, '/login', { email: B.user.email, password: B.user.password }, atRp)
    expect(agent.lastSet('_session')).toMatch(new RegExp(`;\\s*path=/i/${B.id}(;|$)`, 'i'))
  },

  async interactions() {
    const agent = new Agent(server.baseUrl)
    const { url } = await pkceAuthorization(A.config, CB)
    const page = await agent.follow(url, {}, atRp)
    expect(page.url.pathname).toStartWith(`/i/${A.id}/interaction/`)
    const uid = page.url.pathname.split('/').at(-1)!
    const interactionCookie = agent.cookieHeader(page.url)
    expect(interactionCookie).toContain('_interaction=')
    // A's interaction uid under B's prefix, with A's cookies: no sign-in form of A's interaction.
    const atB = await fetch(`${B.issuer}/interaction/${uid}`, {
      headers: { cookie: interactionCookie, accept: 'text/html' },
      redirect: 'manual',
    })
    expect(atB.status).toBe(400)
    const atBHtml = await atB.text()
    expect(atBHtml).toContain('This sign-in request has expired.')
    expect(atBHtml).not.toContain('<label for="password">Password</label>')
    // And posting A's user's credentials there signs nobody in and sends nobody back to the app.
    const posted = await fetch(`${B.issuer}/interaction/${uid}/login`, {
      method: 'POST',
      headers: { ...FORM, cookie: interactionCookie },
      body: new URLSearchParams({ email: A.user.email, password: A.user.password }).toString(),
      redirect: 'manual',
    })
    expect(posted.status).toBe(400)
    expect(posted.headers.get('location')).toBeNull()
    expect(await posted.text()).toContain('This sign-in request has expired.')
    // A's own interaction is still open at A.
    const stillThere = await agent.follow(page.url, {}, atRp)
    expect(await stillThere.res.text()).toContain('<label for="password">Password</label>')
  },

  async clients() {
    for (let round = 0; round < 4; round++) {
      await expectOwnClientToken(await clientCredentials(A, A), A, B)
      expectInvalidClient(await clientCredentials(A, B))
      await expectOwnClientToken(await clientCredentials(B, B), B, A)
      expectInvalidClient(await clientCredentials(B, A))
    }
    // A client of one instance with the other's secret, at either instance: refused.
    const mixed = { clientId: A.web.clientId, clientSecret: B.web.clientSecret }
    for (const at of [A, B])
      expectInvalidClient(await post(`${at.issuer}/token`, { grant_type: 'client_credentials' }, mixed))
  },

  async clientObjects() {
    // Apps written behind the instances' backs: not among the clients their load read, so each is
    // read by id and its Client object made on oidc-provider's dynamic path.
    const [appA, appB] = await Promise.all([
      registerApp(server.core, A.id, { type: 'web', redirectUris: [CB] }),
      registerApp(server.core, B.id, { type: 'web', redirectUris: [CB] }),
    ])
    const credentials = (app: typeof appA) => ({ clientId: app.clientId, clientSecret: app.clientSecret! })
    expect((await post(`${A.issuer}/token`, CLIENT_CREDENTIALS, credentials(appA))).status).toBe(200)
    expect((await post(`${B.issuer}/token`, CLIENT_CREDENTIALS, credentials(appB))).status).toBe(200)
    expectInvalidClient(await post(`${B.issuer}/token`, CLIENT_CREDENTIALS, credentials(appA)))
    expect(clientObjectIds(A)).toContain(appA.clientId)
    expect(clientObjectIds(A)).not.toContain(appB.clientId)
    expect(clientObjectIds(B)).toContain(appB.clientId)
    expect(clientObjectIds(B)).not.toContain(appA.clientId)
  },

  async clientSecrets() {
    const [appA, appB] = await Promise.all([newApp(A), newApp(B)])
    const rotated = await callApi(
      server.baseUrl,
      owner,
      'POST',
      `/v1/workspaces/${A.id}/apps/${appA.id}/rotate-secret`,
      { grace_hours: 1 },
    )
    expect(rotated.status).toBe(200)
    // A accepts its app's new secret and, in the grace, the old one; neither opens B's app, nor A's app at B.
    for (const secret of [String(rotated.body.client_secret), appA.clientSecret]) {
      expect(
        (await post(`${A.issuer}/token`, CLIENT_CREDENTIALS, { ...appA, clientSecret: secret })).status,
      ).toBe(200)
      expectInvalidClient(
        await post(`${B.issuer}/token`, CLIENT_CREDENTIALS, { ...appB, clientSecret: secret }),
      )
      expectInvalidClient(
        await post(`${B.issuer}/token`, CLIENT_CREDENTIALS, { ...appA, clientSecret: secret }),
      )
    }
    // B's app keeps its one secret, which opens no app of A's.
    expect((await post(`${B.issuer}/token`, CLIENT_CREDENTIALS, appB)).status).toBe(200)
    expectInvalidClient(
      await post(`${A.issuer}/token`, CLIENT_CREDENTIALS, { ...appA, clientSecret: appB.clientSecret }),
    )
  },

  async payloads() {
    await codeFlow(A, B)
    await codeFlow(B, A)
  },

  async deviceFlow() {
    const started = await post(`${A.issuer}/device/auth`, { client_id: A.device.clientId, scope: 'openid' })
    expect(started.status).toBe(200)
    const { device_code, user_code, verification_uri, verification_uri_complete } = started.body
    expect(verification_uri).toBe(`${A.issuer}/device`)
    expect(String(verification_uri_complete)).toStartWith(`${A.issuer}/device?user_code=`)
    // A's device app is no client of B.
    const startedAtB = await post(`${B.issuer}/device/auth`, {
      client_id: A.device.clientId,
      scope: 'openid',
    })
    expect(startedAtB.status).toBe(401)
    expect(startedAtB.body.error).toBe('invalid_client')

    const poll = (at: Instance, clientId: string) =>
      post(`${at.issuer}/token`, { grant_type: DEVICE_GRANT, device_code, client_id: clientId })
    // Positive control: A knows the code (pending).
    expect(await poll(A, A.device.clientId)).toMatchObject({
      status: 400,
      body: { error: 'authorization_pending' },
    })
    // B, polled with B's own device app: not a code of B's.
    const beforeApproval = await poll(B, B.device.clientId)
    expect(beforeApproval.status).toBe(400)
    expect(beforeApproval.body.error).toBe('invalid_grant')

    // A's user code on B's device page: not valid there.
    const browser = new Agent(server.baseUrl)
    const form = await browser.request(`/i/${B.id}/device`)
    expect(form.status).toBe(200)
    const xsrf = /name="xsrf" value="([0-9a-f]+)"/.exec(await form.text())?.[1]
    expect(xsrf).toBeDefined()
    const entered = await browser.request(`/i/${B.id}/device`, {
      method: 'POST',
      headers: FORM,
      body: new URLSearchParams({ xsrf: xsrf!, user_code }).toString(),
    })
    const enteredHtml = await entered.text()
    expect(enteredHtml).toContain('That code is not valid.')
    expect(enteredHtml).not.toContain('op.deviceConfirmForm')

    // At A the same code leads to the confirmation; approved by A's user, the device is connected.
    // verification_uri_complete answers a self-submitting form (the browser posts the code).
    let page = await browser.follow(verification_uri_complete)
    let html = await page.res.text()
    expect(html).toContain('<title>Submitting Callback</title>')
    page = await browser.submit(html, page.url, `${A.issuer}/device`, {})
    html = await page.res.text()
    expect(page.url.href).toBe(`${A.issuer}/device`)
    expect(html).not.toContain('That code is not valid.')
    expect(html).toContain(String(user_code))
    const confirmForm = /<form\b[^>]*id="op.deviceConfirmForm"[^>]*>/.exec(html)?.[0]
    expect(confirmForm).toBeDefined()
    const action = /action="([^"]*)"/.exec(confirmForm!)?.[1]
    expect(action).toStartWith(`${A.issuer}/`)
    page = await browser.submit(html, page.url, action!, {})
    html = await page.res.text()
    expect(page.url.pathname).toStartWith(`/i/${A.id}/interaction/`)
    expect(html).toContain('<label for="password">Password</label>')
    const done = await browser.submit(html, page.url, '/login', {
      email: A.user.email,
      password: A.user.password,
    })
    expect(await done.res.text()).toContain('Device connected')

    // Approved at A: B still refuses the code, and A issues A's tokens for it.
    const afterApproval = await poll(B, B.device.clientId)
    expect(afterApproval.status).toBe(400)
    expect(afterApproval.body.error).toBe('invalid_grant')
    expect(afterApproval.body.access_token).toBeUndefined()
    const tokens = await poll(A, A.device.clientId)
    expect(tokens.status).toBe(200)
    const claims = await expectIssuedBy(tokens.body.id_token, A, B, A.device.clientId)
    expect(claims.sub).toBe(A.user.id)
    const info = await fetch(`${A.issuer}/me`, {
      headers: { authorization: `Bearer ${tokens.body.access_token}` },
    })
    expect(info.status).toBe(200)
    const infoAtB = await fetch(`${B.issuer}/me`, {
      headers: { authorization: `Bearer ${tokens.body.access_token}` },
    })
    expect(infoAtB.status).toBe(401)
    // Redeemed once at A: B still has nothing for it.
    expect((await poll(B, B.device.clientId)).body.error).toBe('invalid_grant')
  },

  async accounts() {
    const { url } = await pkceAuthorization(B.config, CB)
    const refused = await signIn(new Agent(server.baseUrl), url, A.user)
    expect(refused.res.status).toBe(401)
    expect(refused.url.href).not.toStartWith(RP)
    expect(await refused.res.text()).toContain('Wrong email or password.')

    const email = 'same@example.com'
    const inA = await signUp(server.core, A.id, { email, password: 'password of same at A' })
    const inB = await signUp(server.core, B.id, { email, password: 'password of same at B' })
    expect(inA.id).not.toBe(inB.id)
    // A's password at B: refused.
    const wrong = await signIn(new Agent(server.baseUrl), (await pkceAuthorization(B.config, CB)).url, {
      email,
      password: 'password of same at A',
    })
    expect(wrong.res.status).toBe(401)
    expect(await wrong.res.text()).toContain('Wrong email or password.')
    // B's password at B: B's account, B's sub, B's keys.
    const { url: again, verifier } = await pkceAuthorization(B.config, CB)
    const ok = await signIn(new Agent(server.baseUrl), again, { email, password: 'password of same at B' })
    expect(ok.url.href).toStartWith(CB)
    const tokens = await oidc.authorizationCodeGrant(B.config, ok.url, { pkceCodeVerifier: verifier })
    const claims = await expectIssuedBy(tokens.id_token!, B, A, B.web.clientId)
    expect(claims.sub).toBe(inB.id)
    expect(claims.sub).not.toBe(inA.id)
  },

  async featureClaims() {
    // Through the one feature claim shipped today: `tenants`.
    /** A tenant of `inst`'s workspace with `inst`'s user in it. */
    const join = async (inst: Instance, slug: string) => {
      const call = (path: string, body: unknown) =>
        callApi(server.baseUrl, owner, 'POST', `/v1/workspaces/${inst.id}/tenants${path}`, body)
      const made = await call('', { slug, name: slug })
      expect(made.status).toBe(201)
      expect((await call(`/${made.body.id}/members`, { user_id: inst.user.id })).status).toBe(201)
    }
    await Promise.all([join(A, 'tenant-of-a'), join(B, 'tenant-of-b')])
    const claimsOf = async (home: Instance, away: Instance) => {
      const { end, verifier } = await signInFresh(home, 'openid tenants')
      expect(end.url.href).toStartWith(CB)
      const tokens = await oidc.authorizationCodeGrant(home.config, end.url, { pkceCodeVerifier: verifier })
      return expectIssuedBy(tokens.id_token!, home, away, home.web.clientId)
    }
    const [claimsA, claimsB] = await Promise.all([claimsOf(A, B), claimsOf(B, A)])
    expect(claimsA.tenants).toEqual(['tenant-of-a'])
    expect(claimsB.tenants).toEqual(['tenant-of-b'])
  },

  async audience() {
    const [tokenA, tokenB] = await Promise.all([clientCredentials(A, A), clientCredentials(B, B)])
    expect(decodeJwt(tokenA.body.access_token).aud).toBe(A.issuer)
    expect(decodeJwt(tokenB.body.access_token).aud).toBe(B.issuer)
  },

  async sessionEnded() {
    const before = { A: (await sessionsEnded(A)).length, B: (await sessionsEnded(B)).length }
    const { agent, end, verifier } = await signInFresh(A)
    const tokens = await oidc.authorizationCodeGrant(A.config, end.url, { pkceCodeVerifier: verifier })
    const page = await agent.follow(oidc.buildEndSessionUrl(A.config, { id_token_hint: tokens.id_token! }))
    const html = await page.res.text()
    expect(html).toContain('Signing you out')
    const done = await agent.submit(html, page.url, '/session/end/confirm', { logout: 'yes' })
    expect(await done.res.text()).toContain('You have been signed out.')
    const endedA = await sessionsEnded(A)
    expect(endedA.length).toBe(before.A + 1)
    expect(endedA.at(-1)?.data).toMatchObject({ user_id: A.user.id })
    expect((await sessionsEnded(B)).length).toBe(before.B)
  },

  async sessionLifetime() {
    const [A, B] = await changedSettingsPair()
    expect((await patchPolicy(A, { session_lifetime_hours: 1 })).session_lifetime_hours).toBe(1)
    const policyB = await callApi(server.baseUrl, owner, 'GET', `/v1/workspaces/${B.id}/login-policy`)
    expect(policyB.body.session_lifetime_hours).toBe(168)
    const [atA, atB] = await Promise.all([signInFresh(A), signInFresh(B)])
    expect(atA.end.url.href).toStartWith(CB)
    expect(atB.end.url.href).toStartWith(CB)
    const leftA = sessionSecondsLeft(atA.agent)
    const leftB = sessionSecondsLeft(atB.agent)
    expect(leftA).toBeGreaterThan(3600 - 120)
    expect(leftA).toBeLessThan(3600 + 60)
    expect(leftB).toBeGreaterThan(168 * 3600 - 120)
    expect(leftB).toBeLessThan(168 * 3600 + 60)
  },

  async secondFactor() {
    // A pair of its own: once A requires MFA, A's users no longer sign in with a password alone.
    const [A, B] = await freshPair()
    expect((await patchPolicy(A, { mfa: 'required' })).mfa).toBe('required')
    const policyB = await callApi(server.baseUrl, owner, 'GET', `/v1/workspaces/${B.id}/login-policy`)
    expect(policyB.body.mfa).toBe('off')
    const [atA, atB] = await Promise.all([signInFresh(A), signInFresh(B)])

    // A: the password is right, and the user is sent to enrol before any code is issued.
    expect(atA.end.url.href).not.toStartWith(RP)
    expect(atA.end.url.pathname).toStartWith(`/i/${A.id}/`)
    expect(atA.end.url.pathname).toContain('/mfa')
    expect(await atA.end.res.text()).toContain('Set up two-step verification')

    // B: straight back to the app with a code; the ID token says a password alone was used.
    expect(atB.end.url.href).toStartWith(CB)
    const tokens = await oidc.authorizationCodeGrant(B.config, atB.end.url, {
      pkceCodeVerifier: atB.verifier,
    })
    const claims = await expectIssuedBy(tokens.id_token!, B, A, B.web.clientId)
    expect(claims.amr).toEqual(['pwd'])

    // Both again at once, the other way round: each keeps its own policy.
    const [againB, againA] = await Promise.all([signInFresh(B), signInFresh(A)])
    expect(againB.end.url.href).toStartWith(CB)
    expect(againA.end.url.href).not.toStartWith(RP)
    expect(await againA.end.res.text()).toContain('Set up two-step verification')
  },

  async signInMethods() {
    const [A, B] = await changedSettingsPair()
    expect((await patchPolicy(A, { allow_registration: false })).allow_registration).toBe(false)
    const [pageA, pageB] = await Promise.all([signInPage(A), signInPage(B)])
    expect(pageA.html).not.toContain('Create an account')
    expect(pageB.html).toContain('Create an account')
  },

  async idps() {
    const [A, B] = await changedSettingsPair()
    const added = await callApi(server.baseUrl, owner, 'POST', `/v1/workspaces/${A.id}/idps`, {
      type: 'google',
      client_id: 'google-client-of-a',
      client_secret: 'google secret of a',
    })
    expect(added.status).toBe(201)
    const [pageA, pageB] = await Promise.all([signInPage(A), signInPage(B)])
    expect(pageA.html).toContain(`data-idp="${added.body.id}"`)
    expect(pageB.html).not.toContain('data-idp=')
  },

  async brand() {
    const [A, B] = await changedSettingsPair()
    await brandAs(A, 'The brand of A')
    const [pageA, pageB] = await Promise.all([signInPage(A), signInPage(B)])
    expect(pageA.html).toContain('The brand of A')
    expect(pageB.html).not.toContain('The brand of A')
  },

  async csp() {
    const [A, B] = await changedSettingsPair()
    await brandAs(A, 'Coloured A')
    const styleSources = (csp: string) => /style-src ([^;]+)/.exec(csp)?.[1]?.split(' ') ?? []
    const [pageA, pageB] = await Promise.all([signInPage(A), signInPage(B)])
    const [stylesA, stylesB] = [styleSources(pageA.csp), styleSources(pageB.csp)]
    // A's page allows its brand's style element by hash; B's allows the layout's only.
    expect(stylesA.length).toBe(stylesB.length + 1)
    expect(stylesA.filter((s) => !stylesB.includes(s))).toHaveLength(1)
  },
}

/** `inst`'s workspace branded with `name` and a colour of its own, through the API. */
async function brandAs(inst: Instance, name: string) {
  const res = await callApi(server.baseUrl, owner, 'PATCH', `/v1/workspaces/${inst.id}/branding`, {
    display_name: name,
    primary_color: '#0b5fff',
  })
  expect(res.status).toBe(200)
}

describe('the options served per instance (PER_INSTANCE)', () => {
  it('each have their isolation case here', () => {
    const cases: Record<string, unknown> = CASES
    expect(Object.keys(PER_INSTANCE).filter((option) => typeof cases[option] !== 'function')).toEqual([])
  })

  it('are read of every field of a served instance but the shared Provider', async () => {
    // A's record with its settings read (a page of its own read them).
    await signInPage(A)
    const record = held(A)
    const fields = [
      ...Object.keys(record),
      ...Object.keys(Object.getOwnPropertyDescriptors(Object.getPrototypeOf(record))),
    ]
    const read = new Set<string>(Object.values(PER_INSTANCE).flatMap((option) => option.reads))
    expect(
      fields.filter((field) => !read.has(field) && field !== 'provider' && field !== 'callback'),
    ).toEqual([])
  })
})

describe('each option served per instance is kept to its instance', () => {
  for (const option of Object.keys(PER_INSTANCE) as PerInstanceOption[])
    it(`${option}: ${PER_INSTANCE[option].what}`, () => CASES[option]())
})

describe('concurrency', () => {
  it('keeps every answer to its own instance with 64 requests in flight, alternating A and B', async () => {
    await clientCredentialsBurst(64)
  })

  it('keeps A and B apart with both code flows and a client-credentials burst in flight at once', async () => {
    await Promise.all([codeFlow(A, B), codeFlow(B, A), clientCredentialsBurst(48), codeFlow(A, B)])
  })
})
