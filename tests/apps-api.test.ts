import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createRemoteJWKSet, jwtVerify } from 'jose'
import * as oidc from 'openid-client'
import { Agent } from './support/browserless'
import { clientCredentials } from './support/instances'
import { startTestServer, type TestServer } from './support/server'
import { type Json, json, type PlatformUser, signUpEndUser, signUpUser, workspaceFor } from './support/users'

type Workspace = { id: string; auth_url: string }

let server: TestServer
let owner: PlatformUser
/** The workspace of tests that look at their own apps only; one that lists all its apps makes its own. */
let ws: Workspace

const LOCAL_CB = 'http://localhost:3000/cb'
const RP = 'https://rp.example.com'

const activeWorkspace = (name: string): Promise<Workspace> => workspaceFor(owner, name)

beforeAll(async () => {
  server = await startTestServer()
  owner = await signUpUser(server, {
    email: 'owner@example.com',
    password: 'owner-password-1',
    name: 'Owner',
  })
  ws = await activeWorkspace('Apps Inc')
})
afterAll(() => server.stop())

/** Raw SQL on the server's store (`$1…$n`, valid on SQLite and PostgreSQL). */
const sql = (query: string, ...params: unknown[]) => server.core.store.query(query, params)
const appsPath = (w: Workspace = ws) => `/v1/workspaces/${w.id}/apps`
const createApp = (body: unknown, w: Workspace = ws) => json(owner.agent, 'POST', appsPath(w), body)
const listApps = async (w: Workspace = ws) =>
  (await json(owner.agent, 'GET', appsPath(w))).body as { items: Json[]; total: number }

const SPA = { name: 'My SPA', app_type: 'spa', dev_mode: true, redirect_uris: [LOCAL_CB] }
const WEB = { name: 'My Web App', redirect_uris: [`${RP}/cb`] }

/** An app created for the test that uses it. */
async function newApp(body: typeof SPA | typeof WEB, w: Workspace = ws): Promise<Record<string, Json>> {
  const r = await createApp(body, w)
  expect(r.status).toBe(201)
  return r.body
}

const discover = (clientId: string, secret: string | null) =>
  oidc.discovery(
    new URL(ws.auth_url),
    clientId,
    secret ?? undefined,
    secret ? oidc.ClientSecretBasic(secret) : oidc.None(),
    { execute: [oidc.allowInsecureRequests] },
  )

/** Authorization code + PKCE with openid-client; a new end user signs up on the hosted page. */
async function codeFlow(
  app: { client_id: string; client_secret: string | null },
  redirectUri: string,
  endUser: { email: string; password: string; name: string },
) {
  const config = await discover(app.client_id, app.client_secret)
  expect(config.serverMetadata().issuer).toBe(ws.auth_url)
  const verifier = oidc.randomPKCECodeVerifier()
  const state = oidc.randomState()
  const nonce = oidc.randomNonce()
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid email profile',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  })
  const back = await signUpEndUser(new Agent(server.baseUrl), url, endUser, redirectUri)
  expect(`${back.origin}${back.pathname}`).toBe(redirectUri)
  expect(back.searchParams.get('code')).toBeTruthy()
  const tokens = await oidc.authorizationCodeGrant(config, back, {
    pkceCodeVerifier: verifier,
    expectedState: state,
    expectedNonce: nonce,
    idTokenExpected: true,
  })
  const { payload } = await jwtVerify(tokens.id_token!, createRemoteJWKSet(new URL(`${ws.auth_url}/jwks`)), {
    issuer: ws.auth_url,
    audience: app.client_id,
  })
  expect(payload).toMatchObject({ iss: ws.auth_url, aud: app.client_id, nonce, email: endUser.email })
  expect(payload.sub).toBeTruthy()
  expect(tokens.claims()?.sub).toBe(payload.sub!)
  return { tokens, payload }
}

describe('spa apps', () => {
  it('creates a spa app (201, no secret) and lists it without any secret', async () => {
    const own = await activeWorkspace('Spa Only')
    const r = await createApp(SPA, own)
    expect(r.status).toBe(201)
    const spa = r.body
    expect(spa).toEqual({
      id: expect.any(String),
      name: 'My SPA',
      client_id: expect.any(String),
      client_secret: null,
      app_type: 'spa',
      issuer: own.auth_url,
      discovery_url: `${own.auth_url}/.well-known/openid-configuration`,
    })
    expect(spa.client_id.length).toBeGreaterThan(10)
    const discovery = await fetch(spa.discovery_url)
    expect(discovery.status).toBe(200)
    expect(((await discovery.json()) as { issuer: string }).issuer).toBe(spa.issuer)

    const list = await listApps(own)
    expect(list.total).toBe(1)
    expect(list.items).toEqual([
      {
        id: spa.id,
        name: 'My SPA',
        client_id: spa.client_id,
        app_type: 'spa',
        redirect_uris: [LOCAL_CB],
        post_logout_redirect_uris: [],
        dev_mode: true,
      },
    ])
  })

  it('completes authorization code + PKCE with openid-client for the new spa app', async () => {
    const spa = await newApp(SPA)
    await codeFlow({ client_id: spa.client_id, client_secret: null }, LOCAL_CB, {
      email: 'spa-user@example.com',
      password: 'spa-user-pass-1',
      name: 'Spa User',
    })
  })

  it('refuses an authorization request without PKCE for the spa app', async () => {
    const spa = await newApp(SPA)
    const url = new URL(`${ws.auth_url}/auth`)
    url.search = new URLSearchParams({
      client_id: spa.client_id,
      response_type: 'code',
      scope: 'openid',
      redirect_uri: LOCAL_CB,
      state: 'no-pkce',
    }).toString()
    const res = await fetch(url, { redirect: 'manual' })
    expect(res.status).toBeGreaterThanOrEqual(300)
    expect(res.status).toBeLessThan(400)
    const location = new URL(res.headers.get('location')!)
    expect(`${location.origin}${location.pathname}`).toBe(LOCAL_CB)
    expect(location.searchParams.get('error')).toBe('invalid_request')
    expect(location.searchParams.get('error_description')).toContain('PKCE')
    expect(location.searchParams.get('state')).toBe('no-pkce')
  })

  it('deletes with 200, idempotently, and the deleted client can no longer authorize', async () => {
    const own = await activeWorkspace('Spa Deleted')
    const spa = await newApp(SPA, own)
    const first = await json(owner.agent, 'DELETE', `${appsPath(own)}/${spa.id}`)
    expect(first.status).toBe(200)
    const again = await json(owner.agent, 'DELETE', `${appsPath(own)}/${spa.id}`)
    expect(again.status).toBe(200)
    const never = await json(owner.agent, 'DELETE', `${appsPath(own)}/app_does_not_exist`)
    expect(never.status).toBe(200)
    expect(await listApps(own)).toEqual({ items: [], total: 0 })
    expect(await sql('SELECT id FROM apps WHERE id = $1', spa.id)).toEqual([])

    const url = new URL(`${own.auth_url}/auth`)
    url.search = new URLSearchParams({
      client_id: spa.client_id,
      response_type: 'code',
      scope: 'openid',
      redirect_uri: LOCAL_CB,
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    }).toString()
    const res = await fetch(url, { redirect: 'manual' })
    // An unknown client is never redirected back to a (possibly hostile) redirect_uri.
    expect(res.headers.get('location') ?? '').not.toStartWith(LOCAL_CB)
    expect(res.status).toBe(400)
  })
})

describe('web apps', () => {
  it('lists the apps to their workspace owner only: 401 without a credential', async () => {
    const anonymous = await fetch(`${server.baseUrl}${appsPath()}`)
    expect(anonymous.status).toBe(401)
    const owned = await json(owner.agent, 'GET', appsPath())
    expect(owned.status).toBe(200)
    expect((owned.body as { items: Json[]; total: number }).items).toHaveLength(
      (owned.body as { total: number }).total,
    )
  })

  it('returns the client secret once, never lists it, and stores only a digest', async () => {
    const r = await createApp(WEB)
    expect(r.status).toBe(201)
    const web = r.body
    expect(web.app_type).toBe('web') // the default type
    expect(typeof web.client_secret).toBe('string')
    expect(web.client_secret.length).toBeGreaterThanOrEqual(32)
    expect(web.issuer).toBe(ws.auth_url)

    const listRes = await json(owner.agent, 'GET', appsPath())
    const listed = (listRes.body.items as Record<string, unknown>[]).find((a) => a.id === web.id)!
    expect(listed).toEqual({
      id: web.id,
      name: 'My Web App',
      client_id: web.client_id,
      app_type: 'web',
      redirect_uris: [`${RP}/cb`],
      post_logout_redirect_uris: [],
      dev_mode: false,
    })
    const raw = JSON.stringify(listRes.body)
    expect(raw).not.toContain(web.client_secret)
    expect(raw).not.toMatch(/secret/i)

    const [row] = await sql('SELECT * FROM apps WHERE id = $1', web.id)
    expect(row!.client_secret_hash).toBeTruthy()
    expect(row!.client_secret_hash).not.toBe(web.client_secret)
    expect(JSON.stringify(row)).not.toContain(web.client_secret)
  })

  it('completes authorization code + PKCE with openid-client using the client secret', async () => {
    const web = await newApp(WEB)
    const { tokens } = await codeFlow(
      { client_id: web.client_id, client_secret: web.client_secret },
      `${RP}/cb`,
      { email: 'web-user@example.com', password: 'web-user-pass-1', name: 'Web User' },
    )
    expect(tokens.access_token).toBeTruthy()
    // A wrong secret is refused at the token endpoint.
    const wrong = await discover(web.client_id, 'not-the-secret')
    await expect(oidc.clientCredentialsGrant(wrong)).rejects.toThrow()
  })

  it('deleting an app through another workspace of the same owner leaves it in place', async () => {
    const web = await newApp(WEB)
    const other = await json(owner.agent, 'POST', '/v1/workspaces', { name: 'Other' })
    expect(other.status).toBe(201)
    const r = await json(owner.agent, 'DELETE', `/v1/workspaces/${other.body.id}/apps/${web.id}`)
    expect(r.status).toBe(200)
    expect((await listApps()).items.map((a) => a.id)).toContain(web.id)
  })

  it('refuses the client credentials of a deleted app with the very next token request', async () => {
    const web = await newApp(WEB)
    const config = await discover(web.client_id, web.client_secret)
    const before = await oidc.clientCredentialsGrant(config)
    expect(before.token_type).toBe('bearer')
    expect((await json(owner.agent, 'DELETE', `${appsPath()}/${web.id}`)).status).toBe(200)
    const after = await clientCredentials(ws.auth_url, web.client_id, web.client_secret)
    expect(after.status).toBe(401)
    expect(((await after.json()) as { error: string }).error).toBe('invalid_client')
  })
})

describe('AppCreate validation', () => {
  const base = { name: 'Valid', redirect_uris: [`${RP}/cb`] }
  type Loc = (string | number)[]

  async function refused(body: unknown, loc: Loc) {
    const before = (await listApps()).total
    const r = await createApp(body)
    expect({ body, status: r.status }).toEqual({ body, status: 422 })
    const locs = (r.body.detail as { loc: Loc; msg: string }[]).map((d) => d.loc)
    expect({ body, locs }).toEqual({ body, locs: expect.arrayContaining([loc]) })
    for (const d of r.body.detail) expect(typeof d.msg).toBe('string')
    expect((await listApps()).total).toBe(before)
  }
  async function accepted(body: Record<string, unknown>) {
    const r = await createApp(body)
    expect({ body, status: r.status }).toEqual({ body, status: 201 })
    await json(owner.agent, 'DELETE', `${appsPath()}/${r.body.id}`)
    return r.body
  }

  it('checks the name length (1..200)', async () => {
    await refused({ ...base, name: '' }, ['body', 'name'])
    await refused({ ...base, name: 'n'.repeat(201) }, ['body', 'name'])
    expect((await accepted({ ...base, name: 'n'.repeat(200) })).name).toBe('n'.repeat(200))
    await refused({ redirect_uris: base.redirect_uris }, ['body', 'name'])
  })

  it('requires at least one redirect URI', async () => {
    await refused({ name: 'No URIs' }, ['body', 'redirect_uris'])
    await refused({ name: 'Empty URIs', redirect_uris: [] }, ['body', 'redirect_uris'])
  })

  it('checks the redirect URI length (1..2083)', async () => {
    const prefix = 'https://a.example/'
    await accepted({ ...base, redirect_uris: [prefix + 'x'.repeat(2083 - prefix.length)] })
    await refused({ ...base, redirect_uris: [prefix + 'x'.repeat(2084 - prefix.length)] }, [
      'body',
      'redirect_uris',
      0,
    ])
    await refused({ ...base, redirect_uris: [''] }, ['body', 'redirect_uris', 0])
  })

  it('requires https unless dev_mode allows http on localhost', async () => {
    for (const app_type of ['web', 'spa']) {
      await refused({ ...base, app_type, redirect_uris: ['http://example.com/cb'] }, [
        'body',
        'redirect_uris',
        0,
      ])
      await refused({ ...base, app_type, redirect_uris: [LOCAL_CB] }, ['body', 'redirect_uris', 0])
      await refused({ ...base, app_type, dev_mode: true, redirect_uris: ['http://example.com/cb'] }, [
        'body',
        'redirect_uris',
        0,
      ])
      await accepted({ ...base, app_type, dev_mode: true, redirect_uris: [LOCAL_CB] })
    }
    // The index points at the offending entry.
    await refused({ ...base, redirect_uris: [`${RP}/ok`, 'http://example.com/cb'] }, [
      'body',
      'redirect_uris',
      1,
    ])
  })

  it('refuses dangerous and non-URI schemes, and fragments', async () => {
    for (const uri of [
      'javascript:alert(1)',
      'ftp://x.example/cb',
      'data:text/html,hi',
      'not a uri',
      '/relative/cb',
      `${RP}/cb#fragment`,
    ]) {
      await refused({ ...base, redirect_uris: [uri] }, ['body', 'redirect_uris', 0])
    }
  })

  it('allows native apps reverse-domain schemes and loopback http, not bare custom schemes', async () => {
    const native = { name: 'Native', app_type: 'native' }
    const app = await accepted({ ...native, redirect_uris: ['com.example.app:/callback'] })
    expect(app.client_secret).toBeNull()
    await accepted({ ...native, redirect_uris: ['http://127.0.0.1:8765/cb'] })
    await refused({ ...native, redirect_uris: ['myapp:/cb'] }, ['body', 'redirect_uris', 0])
    await refused({ ...native, redirect_uris: ['javascript:alert(1)'] }, ['body', 'redirect_uris', 0])
    await refused({ ...native, redirect_uris: ['http://example.com/cb'] }, ['body', 'redirect_uris', 0])
  })

  it('validates post_logout_redirect_uris the same way', async () => {
    for (const uri of ['http://example.com/bye', 'javascript:alert(1)', `${RP}/bye#x`, 'x'.repeat(2084)]) {
      await refused({ ...base, post_logout_redirect_uris: [uri] }, ['body', 'post_logout_redirect_uris', 0])
    }
    await refused({ ...base, post_logout_redirect_uris: [`${RP}/bye`, 'ftp://x.example/bye'] }, [
      'body',
      'post_logout_redirect_uris',
      1,
    ])
    const r = await createApp({ ...base, post_logout_redirect_uris: [`${RP}/bye`] })
    expect(r.status).toBe(201)
    const listed = (await listApps()).items.find((a) => a.id === r.body.id)
    expect(listed.post_logout_redirect_uris).toEqual([`${RP}/bye`])
  })

  it('refuses an unknown app_type and a non-boolean dev_mode', async () => {
    await refused({ ...base, app_type: 'daemon' }, ['body', 'app_type'])
    await refused({ ...base, dev_mode: 'yes' }, ['body', 'dev_mode'])
  })
})
