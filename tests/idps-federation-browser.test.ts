import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { and, asc, eq } from 'drizzle-orm'
import * as oidc from 'openid-client'
import { events } from '../src/events/schema'
import { accounts, signUp } from '../src/identity'
import { ManualClock } from '../src/shared/clock'
import { sharedBrowser } from './support/browser'
import { callApi, person } from './support/callers'
import { activeWorkspace, pkceAuthorization, publicClient, registerApp } from './support/instances'
import { startTestServer, type TestServer } from './support/server'

// Issue 29, "Must hold": federation for real, in headless Chromium. Workspace B adds an `oidc` IdP
// whose issuer is workspace A's instance (an app of A registered with B's redirect URI); a user of A
// signs in to an app of B through it; the user is created in B with `via_idp` = the IdP's name, and
// openid-client on B's side receives valid tokens.

const rp = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('back at the app') })
const RP = `http://127.0.0.1:${rp.port}/cb`
const clock = new ManualClock(Date.now())
let server: TestServer

beforeAll(async () => {
  // A's issuer is this server, on http and loopback: the operator allows both for IdPs here.
  server = await startTestServer({ IDPS_ALLOW_HTTP: 'true', IDPS_ALLOW_PRIVATE: 'true' }, undefined, {
    clock,
  })
})
afterAll(async () => {
  await server.stop()
  rp.stop(true)
})

describe('federation between two workspaces', () => {
  it('signs a user of workspace A in to an app of workspace B through B’s oidc IdP', async () => {
    const owner = await person(server.core)
    const a = await activeWorkspace(server.core, owner.id)
    const b = await activeWorkspace(server.core, owner.id)
    const lin = await signUp(server.core, a, {
      email: 'lin@a.example',
      password: 'lin password 12',
      name: 'Lin',
    })
    await server.core.db.update(accounts).set({ emailVerified: true }).where(eq(accounts.id, lin.id))

    // As with any provider: a client at A registered with B's redirect URI (one per instance, known
    // before the IdP exists), then the IdP at B with that client's credentials.
    const redirectUri = `${server.baseUrl}/i/${b}/broker/callback`
    const appOfA = await registerApp(server.core, a, { type: 'web', redirectUris: [redirectUri] })
    const idp = await callApi(server.baseUrl, owner, 'POST', `/v1/workspaces/${b}/idps`, {
      type: 'oidc',
      name: 'Workspace A',
      issuer: `${server.baseUrl}/i/${a}/`,
      client_id: appOfA.clientId,
      client_secret: appOfA.clientSecret,
    })
    expect(idp.status).toBe(201)
    expect(idp.body.redirect_uri).toBe(redirectUri)

    // An app of B, and a person in Chromium signing in to it.
    const { config } = await publicClient(server.core, server.baseUrl, b, RP)
    const { url, verifier } = await pkceAuthorization(config, RP, 'openid email profile')
    const context = await (await sharedBrowser()).newContext()
    const page = await context.newPage()
    const errors: string[] = []
    page.on('pageerror', (e) => errors.push(e.message))
    await page.goto(url.href)
    await page.getByRole('link', { name: 'Continue with Workspace A' }).click()
    // A's own sign-in page, at A's issuer.
    await page.waitForURL((u) => u.pathname.startsWith(`/i/${a}/interaction/`))
    await page.getByLabel('Email').fill('lin@a.example')
    await page.getByLabel('Password').fill('lin password 12')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL((u) => u.href.startsWith(RP))
    const back = new URL(page.url())
    await context.close()
    expect(errors).toEqual([])

    // openid-client on B's side: a code, valid tokens, the new user of B.
    const tokens = await oidc.authorizationCodeGrant(config, back, {
      pkceCodeVerifier: verifier,
      expectedState: oidc.skipStateCheck,
    })
    const claims = tokens.claims()!
    expect(claims.iss).toBe(`${server.baseUrl}/i/${b}`)
    const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub)
    expect(info.email).toBe('lin@a.example')
    const [inB] = await server.core.db
      .select()
      .from(accounts)
      .where(and(eq(accounts.instanceId, b), eq(accounts.id, claims.sub)))
    expect(inB).toMatchObject({
      email: 'lin@a.example',
      name: 'Lin',
      emailVerified: true,
      viaIdp: 'Workspace A',
    })
    expect(inB!.id).not.toBe(lin.id)
    const users = await callApi(server.baseUrl, owner, 'GET', `/v1/workspaces/${b}/users`)
    expect(users.body.items).toEqual([expect.objectContaining({ id: claims.sub, via_idp: 'Workspace A' })])
    const created = await server.core.db
      .select()
      .from(events)
      .where(and(eq(events.workspaceId, b), eq(events.type, 'user.created')))
      .orderBy(asc(events.createdAt))
    expect(created.map((e) => e.data)).toEqual([
      { user_id: claims.sub, name: 'Lin', email: 'lin@a.example', via_idp: 'Workspace A' },
    ])
  })
})
