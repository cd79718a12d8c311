import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import * as oidc from 'openid-client'
import { ManualClock } from '../src/shared/clock'
import { Agent } from './support/browserless'
import { clientCredentials } from './support/instances'
import { startTestServer, type TestServer } from './support/server'
import { type Json, json, type PlatformUser, signUpEndUser, signUpUser, workspaceFor } from './support/users'

// Issue 57 item 3 and DESIGN (checkpoint 2) "Apps": an app is read, changed (`PATCH`, AppCreate's
// rules, `app.updated`) and its secret rotated (`rotate-secret`, `app.secret_rotated`, an optional
// grace of up to 24 h for the previous one). Each change acts on the very next request of an RP
// using openid-client, though the instance held the client (read with its load or by id) before:
// the removed redirect URI and the old secret are refused at once. The grace runs on the server's
// ManualClock (the secret check reads it), turned, never slept.

const HOUR = 3_600_000
const clock = new ManualClock(Date.now())
let server: TestServer
let owner: PlatformUser

type Workspace = { id: string; auth_url: string }

const RP = 'https://rp.example.com'

beforeAll(async () => {
  server = await startTestServer({}, undefined, { clock })
  owner = await signUpUser(server, {
    email: 'owner@example.com',
    password: 'owner-password-1',
    name: 'Owner',
  })
})
afterAll(() => server.stop())
beforeEach(() => clock.set(Date.now()))

let made = 0
/** A workspace of its own per test: its apps are the oldest few its instance loads with its keys. */
const activeWorkspace = () => workspaceFor(owner, `Edits ${++made}`)

const appsPath = (w: Workspace) => `/v1/workspaces/${w.id}/apps`

async function newApp(w: Workspace, body: Record<string, unknown>): Promise<Json> {
  const r = await json(owner.agent, 'POST', appsPath(w), body)
  expect(r.status).toBe(201)
  return r.body
}

const patchApp = (w: Workspace, id: string, body: unknown) =>
  json(owner.agent, 'PATCH', `${appsPath(w)}/${id}`, body)
const rotate = (w: Workspace, id: string, body?: unknown) =>
  json(owner.agent, 'POST', `${appsPath(w)}/${id}/rotate-secret`, body)

const configOf = (w: Workspace, clientId: string, secret: string) =>
  oidc.discovery(new URL(w.auth_url), clientId, secret, oidc.ClientSecretBasic(secret), {
    execute: [oidc.allowInsecureRequests],
  })

/** The authorization request of an RP with openid-client; `agent` is the end user's browser. */
async function authorize(config: oidc.Configuration, redirectUri: string) {
  const verifier = oidc.randomPKCECodeVerifier()
  const state = oidc.randomState()
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid email',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  })
  return { url, verifier, state }
}

/** A full code flow: the end user signs up (or is signed in already) and the RP redeems the code. */
async function codeFlow(config: oidc.Configuration, redirectUri: string, agent: Agent, email: string) {
  const { url, verifier, state } = await authorize(config, redirectUri)
  const back = await signUpEndUser(
    agent,
    url,
    { email, password: 'end-user-pass-1', name: 'End User' },
    redirectUri,
  )
  return oidc.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: state })
}

/** The authorization endpoint's answer for a redirect URI the client does not have: never a redirect to it. */
async function refusedRedirect(config: oidc.Configuration, redirectUri: string) {
  const { url } = await authorize(config, redirectUri)
  const res = await fetch(url, { redirect: 'manual' })
  expect(res.headers.get('location') ?? '').not.toStartWith(redirectUri)
  expect(res.status).toBe(400)
  expect(await res.text()).toContain('redirect_uri')
}

const auditOf = async (w: Workspace, action: string) =>
  (await json(owner.agent, 'GET', `/v1/workspaces/${w.id}/audit-log?action=${action}`)).body.items as Json[]

describe('GET and PATCH an app', () => {
  it('answers an app as AppOut, and 404 for an unknown id or an app of another workspace', async () => {
    const [w, other] = [await activeWorkspace(), await activeWorkspace()]
    const app = await newApp(w, { name: 'Shop', redirect_uris: [`${RP}/cb`] })
    const got = await json(owner.agent, 'GET', `${appsPath(w)}/${app.id}`)
    expect(got.status).toBe(200)
    expect(got.body).toEqual({
      id: app.id,
      name: 'Shop',
      client_id: app.client_id,
      app_type: 'web',
      redirect_uris: [`${RP}/cb`],
      post_logout_redirect_uris: [],
      dev_mode: false,
    })
    expect((await json(owner.agent, 'GET', `${appsPath(w)}/app_none`)).status).toBe(404)
    expect((await json(owner.agent, 'GET', `${appsPath(other)}/${app.id}`)).status).toBe(404)
    expect((await patchApp(other, app.id, { name: 'Stolen' })).status).toBe(404)
    expect((await rotate(other, app.id)).status).toBe(404)
    expect((await json(owner.agent, 'GET', `${appsPath(w)}/${app.id}`)).body.name).toBe('Shop')
  })

  it('changes the redirect URIs: with openid-client the new one works and the removed one is refused at once', async () => {
    const w = await activeWorkspace()
    const app = await newApp(w, { name: 'Shop', redirect_uris: [`${RP}/old`] })
    const config = await configOf(w, app.client_id, app.client_secret)
    const agent = new Agent(server.baseUrl)
    // The instance holds the client (its load brought it) before the change.
    expect((await codeFlow(config, `${RP}/old`, agent, 'shopper@example.com')).access_token).toBeTruthy()

    const r = await patchApp(w, app.id, {
      name: 'Shop v2',
      redirect_uris: [`${RP}/new`],
      post_logout_redirect_uris: [`${RP}/bye`],
    })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({
      id: app.id,
      name: 'Shop v2',
      client_id: app.client_id,
      app_type: 'web',
      redirect_uris: [`${RP}/new`],
      post_logout_redirect_uris: [`${RP}/bye`],
      dev_mode: false,
    })
    await refusedRedirect(config, `${RP}/old`)
    expect((await codeFlow(config, `${RP}/new`, agent, 'shopper@example.com')).access_token).toBeTruthy()
    // The secret did not change.
    expect((await clientCredentials(w.auth_url, app.client_id, app.client_secret)).status).toBe(200)

    const [entry, ...more] = await auditOf(w, 'app.updated')
    expect(more).toEqual([])
    expect(entry).toMatchObject({
      actor: `user:${owner.id}`,
      target: { type: 'app', id: app.id },
      changes: {
        name: { from: 'Shop', to: 'Shop v2' },
        redirect_uris: { from: [`${RP}/old`], to: [`${RP}/new`] },
        post_logout_redirect_uris: { from: [], to: [`${RP}/bye`] },
      },
    })
    // A PATCH that changes nothing records nothing.
    expect((await patchApp(w, app.id, { name: 'Shop v2', app_type: 'web' })).status).toBe(200)
    expect(await auditOf(w, 'app.updated')).toHaveLength(1)
  })

  it('turns development mode on for a localhost redirect URI, and refuses to turn it off while one stays', async () => {
    const w = await activeWorkspace()
    const app = await newApp(w, { name: 'Dev', app_type: 'spa', redirect_uris: [`${RP}/cb`] })
    const local = 'http://localhost:3000/cb'
    const refused = await patchApp(w, app.id, { redirect_uris: [`${RP}/cb`, local] })
    expect(refused.status).toBe(422)
    expect(refused.body.detail[0].loc).toEqual(['body', 'redirect_uris', 1])
    const on = await patchApp(w, app.id, { redirect_uris: [local], dev_mode: true })
    expect(on.status).toBe(200)
    expect(on.body).toMatchObject({ redirect_uris: [local], dev_mode: true })
    const off = await patchApp(w, app.id, { dev_mode: false })
    expect(off.status).toBe(422)
    expect(off.body.detail[0].loc).toEqual(['body', 'redirect_uris', 0])
    const spa = await oidc.discovery(new URL(w.auth_url), app.client_id, undefined, oidc.None(), {
      execute: [oidc.allowInsecureRequests],
    })
    const tokens = await codeFlow(spa, local, new Agent(server.baseUrl), 'dev@example.com')
    expect(tokens.id_token).toBeTruthy()
  })

  it("applies AppCreate's rules, refuses a new app_type, and leaves the app as it was", async () => {
    const w = await activeWorkspace()
    const app = await newApp(w, { name: 'Strict', redirect_uris: [`${RP}/cb`] })
    const cases: [unknown, (string | number)[]][] = [
      [{ name: '' }, ['body', 'name']],
      [{ name: '   ' }, ['body', 'name']],
      [{ name: 'n'.repeat(201) }, ['body', 'name']],
      [{ redirect_uris: [] }, ['body', 'redirect_uris']],
      [{ redirect_uris: ['javascript:alert(1)'] }, ['body', 'redirect_uris', 0]],
      [{ redirect_uris: [`${RP}/ok`, `${RP}/cb#x`] }, ['body', 'redirect_uris', 1]],
      [{ post_logout_redirect_uris: ['http://example.com/bye'] }, ['body', 'post_logout_redirect_uris', 0]],
      [{ dev_mode: 'yes' }, ['body', 'dev_mode']],
      [{ app_type: 'spa' }, ['body', 'app_type']],
      [{ app_type: 'daemon' }, ['body', 'app_type']],
    ]
    for (const [body, loc] of cases) {
      const r = await patchApp(w, app.id, body)
      expect({ body, status: r.status }).toEqual({ body, status: 422 })
      expect({ body, locs: (r.body.detail as Json[]).map((d) => d.loc) }).toEqual({
        body,
        locs: expect.arrayContaining([loc]),
      })
    }
    expect((await json(owner.agent, 'GET', `${appsPath(w)}/${app.id}`)).body).toMatchObject({
      name: 'Strict',
      app_type: 'web',
      redirect_uris: [`${RP}/cb`],
      dev_mode: false,
    })
    expect(await auditOf(w, 'app.updated')).toEqual([])
  })
})

describe('rotate-secret', () => {
  it('refuses the old secret at once and the new one works with openid-client', async () => {
    const w = await activeWorkspace()
    const app = await newApp(w, { name: 'Rotating', redirect_uris: [`${RP}/cb`] })
    const old = await configOf(w, app.client_id, app.client_secret)
    // The instance holds the client and has compared its secret before the rotation.
    expect((await oidc.clientCredentialsGrant(old)).access_token).toBeTruthy()

    // No body: no grace (a malformed one is a 422, as on every route: auth-order.test.ts).
    const r = await rotate(w, app.id)
    expect(r.status).toBe(200)
    expect(r.res.headers.get('cache-control')).toBe('no-store')
    expect(r.body).toEqual({
      client_id: app.client_id,
      client_secret: expect.any(String),
      previous_secret_expires_at: null,
    })
    expect(r.body.client_secret).not.toBe(app.client_secret)
    expect(r.body.client_secret.length).toBeGreaterThanOrEqual(32)

    const refused = await clientCredentials(w.auth_url, app.client_id, app.client_secret)
    expect(refused.status).toBe(401)
    expect(await refused.json()).toMatchObject({ error: 'invalid_client' })
    await expect(oidc.clientCredentialsGrant(old)).rejects.toThrow()
    const fresh = await configOf(w, app.client_id, r.body.client_secret)
    expect((await oidc.clientCredentialsGrant(fresh)).access_token).toBeTruthy()
    const tokens = await codeFlow(fresh, `${RP}/cb`, new Agent(server.baseUrl), 'rotated@example.com')
    expect(tokens.id_token).toBeTruthy()

    const [entry, ...more] = await auditOf(w, 'app.secret_rotated')
    expect(more).toEqual([])
    expect(entry).toMatchObject({
      actor: `user:${owner.id}`,
      target: { type: 'app', id: app.id },
      changes: { client_secret: { to: '(changed)' }, previous_secret_expires_at: { to: null } },
    })
    const log = JSON.stringify((await json(owner.agent, 'GET', `/v1/workspaces/${w.id}/audit-log`)).body)
    expect(log).not.toContain(r.body.client_secret)
    expect(log).not.toContain(app.client_secret)
  })

  it('with a grace of 1 h accepts the old secret until previous_secret_expires_at, then refuses it', async () => {
    const w = await activeWorkspace()
    const app = await newApp(w, { name: 'Graceful', redirect_uris: [`${RP}/cb`] })
    expect((await clientCredentials(w.auth_url, app.client_id, app.client_secret)).status).toBe(200)
    const rotatedAt = clock.now()
    const r = await rotate(w, app.id, { grace_hours: 1 })
    expect(r.status).toBe(200)
    expect(r.body.previous_secret_expires_at).toBe(new Date(rotatedAt + HOUR).toISOString())
    const [oldSecret, newSecret] = [app.client_secret as string, r.body.client_secret as string]
    const status = async (secret: string) =>
      (await clientCredentials(w.auth_url, app.client_id, secret)).status

    expect(await status(oldSecret)).toBe(200)
    expect(await status(newSecret)).toBe(200)
    expect(await status('neither-of-them')).toBe(401)
    clock.advance(HOUR - 1000)
    expect(await status(oldSecret)).toBe(200)
    clock.advance(1000)
    expect(await status(oldSecret)).toBe(401)
    expect(await status(newSecret)).toBe(200)
    expect(
      (await oidc.clientCredentialsGrant(await configOf(w, app.client_id, newSecret))).access_token,
    ).toBeTruthy()
  })

  it('a second rotation ends the grace of the first: only the secret it replaced may still work', async () => {
    const w = await activeWorkspace()
    const app = await newApp(w, { name: 'Twice', redirect_uris: [`${RP}/cb`] })
    const first = await rotate(w, app.id, { grace_hours: 24 })
    const second = await rotate(w, app.id, { grace_hours: 24 })
    expect(second.status).toBe(200)
    const status = async (secret: string) =>
      (await clientCredentials(w.auth_url, app.client_id, secret)).status
    expect(await status(app.client_secret)).toBe(401)
    expect(await status(first.body.client_secret)).toBe(200)
    expect(await status(second.body.client_secret)).toBe(200)
    // Without a grace, the one it replaces is refused at once, whatever grace it had.
    const third = await rotate(w, app.id, {})
    expect(third.body.previous_secret_expires_at).toBeNull()
    expect(await status(first.body.client_secret)).toBe(401)
    expect(await status(second.body.client_secret)).toBe(401)
    expect(await status(third.body.client_secret)).toBe(200)
  })

  it('answers 409 for public clients, 404 for an unknown app and 422 for a grace outside 0..24 h', async () => {
    const w = await activeWorkspace()
    const spa = await newApp(w, { name: 'Public', app_type: 'spa', redirect_uris: [`${RP}/cb`] })
    const native = await newApp(w, {
      name: 'CLI',
      app_type: 'native',
      redirect_uris: ['http://127.0.0.1/cb'],
    })
    for (const app of [spa, native]) {
      const r = await rotate(w, app.id)
      expect(r.status).toBe(409)
      expect(r.body.detail).toContain('Only web apps')
    }
    expect((await rotate(w, 'app_none')).status).toBe(404)
    const web = await newApp(w, { name: 'Web', redirect_uris: [`${RP}/cb`] })
    for (const grace_hours of [-1, 25, 1.5, null]) {
      const r = await rotate(w, web.id, { grace_hours })
      expect({ grace_hours, status: r.status }).toEqual({ grace_hours, status: 422 })
    }
    expect((await clientCredentials(w.auth_url, web.client_id, web.client_secret)).status).toBe(200)
    expect(await auditOf(w, 'app.secret_rotated')).toEqual([])
  })
})
