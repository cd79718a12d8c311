import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { and, asc, eq } from 'drizzle-orm'
import * as oidc from 'openid-client'
import { events } from '../src/events/schema'
import { loginPolicies } from '../src/features/login-policy/schema'
import { accounts, signUp } from '../src/identity'
import { accountLinks, accountTokens } from '../src/identity/schema'
import { ManualClock } from '../src/shared/clock'
import { Agent } from './support/browserless'
import { callApi, type Person, person } from './support/callers'
import { startIdpStandIn } from './support/idp-stand-in'
import { activeWorkspace, pkceAuthorization, publicClient } from './support/instances'
import { startTestServer, type TestServer } from './support/server'
import { enrolTotp } from './support/totp'

// Issue 29: signing in to a workspace's apps through its external IdPs, against a local stand-in
// for Google, Microsoft and GitHub that the endpoint table (IDP_ENDPOINTS) points at.
const CLIENT_ID = 'stand-in-client'
const CLIENT_SECRET = 'stand-in-secret-123'
const RP = 'http://127.0.0.1:1/cb'
const clock = new ManualClock(Date.now())
let server: TestServer
let idp: Awaited<ReturnType<typeof startIdpStandIn>>
/** Workspaces whose sign-ups a feature's check refuses now (as billing's does past the monthly users). */
const paused = new Set<string>()
const pausing = {
  name: 'pausing',
  identity: () => ({ signUpChecks: [{ name: 'paused', blocks: async (ws: string) => paused.has(ws) }] }),
}

beforeAll(async () => {
  idp = await startIdpStandIn(CLIENT_ID, CLIENT_SECRET)
  server = await startTestServer(
    {
      IDP_ENDPOINTS: idp.endpoints,
      IDPS_ALLOW_HTTP: 'true',
      IDPS_ALLOW_PRIVATE: 'true',
      // The platform's own Google sign-in (SPEC login rule 1), played by the stand-in too.
      GOOGLE_CLIENT_ID: CLIENT_ID,
      GOOGLE_CLIENT_SECRET: CLIENT_SECRET,
    },
    undefined,
    { clock, identity: [pausing] },
  )
})
afterAll(async () => {
  await server.stop()
  idp.stop()
})

const atRp = (u: URL) => u.href.startsWith(RP)

interface Setup {
  owner: Person
  ws: string
  config: oidc.Configuration
}

async function setup(
  type: 'google' | 'github' | 'microsoft' | 'oidc' = 'github',
  trust: { trust_email?: boolean; trust_mfa?: boolean } = {},
): Promise<Setup & { idpId: string }> {
  const owner = await person(server.core)
  const ws = await activeWorkspace(server.core, owner.id)
  const { config } = await publicClient(server.core, server.baseUrl, ws, RP)
  return { owner, ws, config, idpId: await addIdp({ owner, ws }, type, trust) }
}

/** Another IdP of the workspace (added by its owner, who may trust it); its id. */
async function addIdp(
  s: Pick<Setup, 'owner' | 'ws'>,
  type: 'google' | 'github' | 'microsoft' | 'oidc',
  trust: { trust_email?: boolean; trust_mfa?: boolean } = {},
): Promise<string> {
  const created = await callApi(server.baseUrl, s.owner, 'POST', `/v1/workspaces/${s.ws}/idps`, {
    type,
    client_id: CLIENT_ID,
    client_secret: CLIENT_SECRET,
    ...(type === 'oidc' ? { issuer: idp.base, name: 'Stand-in SSO' } : {}),
    ...trust,
  })
  expect(created.status).toBe(201)
  return created.body.id
}

/** The hosted sign-in page of a new authorization request, and the agent holding its cookies. */
async function signInPage(s: Setup) {
  const agent = new Agent(server.baseUrl)
  const { url, verifier } = await pkceAuthorization(s.config, RP, 'openid email')
  const page = await agent.follow(url, {}, atRp)
  return { agent, page, html: await page.res.text(), verifier }
}

/** Clicks the IdP's button (the first, or `idpId`'s) and follows everything (the stand-in approves at once). */
async function throughIdp(s: Setup, idpId = '') {
  const { agent, html, page, verifier } = await signInPage(s)
  const href = new RegExp(`<a href="([^"]+)" data-idp="${idpId}`).exec(html)?.[1]
  expect(href).toBeDefined()
  const done = await agent.follow(new URL(href!.replace(/&amp;/g, '&'), page.url), {}, atRp)
  return { agent, done, verifier }
}

async function tokensFrom(s: Setup, back: URL, verifier: string) {
  return oidc.authorizationCodeGrant(s.config, back, {
    pkceCodeVerifier: verifier,
    expectedState: oidc.skipStateCheck,
  })
}

/** A password account of the workspace whose address is verified. */
async function verifiedAccount(s: Setup, email: string, password: string) {
  const account = await signUp(server.core, s.ws, { email, password })
  await server.core.db.update(accounts).set({ emailVerified: true }).where(eq(accounts.id, account.id))
  return account
}

const linksOf = async (accountId: string) =>
  server.core.db
    .select({ idpId: accountLinks.idpId, subject: accountLinks.subject })
    .from(accountLinks)
    .where(eq(accountLinks.accountId, accountId))

const eventsOf = async (ws: string, type: string) =>
  (
    await server.core.db
      .select()
      .from(events)
      .where(and(eq(events.workspaceId, ws), eq(events.type, type)))
      .orderBy(asc(events.createdAt), asc(events.id))
  ).map((e) => e.data)

describe('sign-in through a workspace IdP', () => {
  it('creates the user just in time with via_idp (GitHub: the verified primary address from its API)', async () => {
    const s = await setup('github')
    idp.state.next = {
      sub: '4242',
      email: 'ignored@example.com',
      name: 'Ada',
      githubEmails: [
        { email: 'old@example.com', primary: false, verified: false },
        { email: 'Ada@Example.com', primary: true, verified: true },
      ],
    }
    const { done, verifier } = await throughIdp(s)
    expect(atRp(done.url)).toBe(true)
    // The request to GitHub carried state and PKCE (S256), and the redirect URI of the IdP.
    const asked = idp.state.authorizeRequests.at(-1)!.params
    expect(asked.get('client_id')).toBe(CLIENT_ID)
    expect(asked.get('code_challenge_method')).toBe('S256')
    expect(asked.get('state')).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{20,}$/)
    expect(asked.get('redirect_uri')).toBe(`${server.baseUrl}/i/${s.ws}/broker/callback`)
    const tokens = await tokensFrom(s, done.url, verifier)
    const claims = tokens.claims()!
    const users = await callApi(server.baseUrl, s.owner, 'GET', `/v1/workspaces/${s.ws}/users`)
    expect(users.body.items).toEqual([
      expect.objectContaining({
        id: claims.sub,
        email: 'ada@example.com',
        email_verified: true,
        via_idp: 'GitHub',
      }),
    ])
    const who = { user_id: claims.sub, name: 'Ada', email: 'ada@example.com', via_idp: 'GitHub' }
    expect(await eventsOf(s.ws, 'user.created')).toEqual([who])
    expect(await eventsOf(s.ws, 'session.started')).toEqual([who])

    // The second sign-in finds the same account by the IdP's subject.
    const again = await throughIdp(s)
    const second = await tokensFrom(s, again.done.url, again.verifier)
    expect(second.claims()!.sub).toBe(claims.sub)
    expect(await eventsOf(s.ws, 'user.created')).toHaveLength(1)
  })

  it('links an existing account at once when both proved the address and an admin trusts the IdP addresses', async () => {
    const s = await setup('google', { trust_email: true })
    const existing = await signUp(server.core, s.ws, {
      email: 'grace@example.com',
      password: 'grace password 1',
    })
    // The IdP does not vouch for the address: refused.
    idp.state.next = { sub: 'g-1', email: 'grace@example.com', emailVerified: false }
    const refused = await throughIdp(s)
    expect(refused.done.res.status).toBe(409)
    expect(await refused.done.res.text()).toContain('already used by another account')
    // The IdP does, but the account never proved it (anyone may have signed up with it): refused,
    // so a squatter's password never comes to share the real owner's account.
    idp.state.next = { sub: 'g-1', email: 'grace@example.com', emailVerified: true }
    const squatted = await throughIdp(s)
    expect(squatted.done.res.status).toBe(409)
    expect(await linksOf(existing.id)).toEqual([])

    await server.core.db.update(accounts).set({ emailVerified: true }).where(eq(accounts.id, existing.id))
    const { done, verifier } = await throughIdp(s)
    expect(atRp(done.url)).toBe(true)
    expect((await tokensFrom(s, done.url, verifier)).claims()!.sub).toBe(existing.id)
    expect(await linksOf(existing.id)).toEqual([{ idpId: s.idpId, subject: 'g-1' }])
  })

  it('accepts an open invitation for the address a trusted IdP proved, and not an expired one', async () => {
    const s = await setup('google', { trust_email: true })
    const invite = (email: string) =>
      callApi(server.baseUrl, s.owner, 'POST', `/v1/workspaces/${s.ws}/users/invite`, { email })
    const invited = await invite('kay@example.com')
    expect(invited.status).toBe(201)
    idp.state.next = { sub: 'k-1', email: 'kay@example.com', name: 'Kay' }
    // An IdP no admin trusts does not accept the invitation mailed to the address's owner.
    const refused = await throughIdp(s, await addIdp(s, 'google'))
    expect(refused.done.res.status).toBe(409)
    expect(await refused.done.res.text()).toContain('accept it from the invitation email first')
    expect(await linksOf(invited.body.id)).toEqual([])
    const { done, verifier } = await throughIdp(s, s.idpId)
    expect(atRp(done.url)).toBe(true)
    expect((await tokensFrom(s, done.url, verifier)).claims()!.sub).toBe(invited.body.id)
    const users = await callApi(server.baseUrl, s.owner, 'GET', `/v1/workspaces/${s.ws}/users`)
    expect(users.body.items).toEqual([
      expect.objectContaining({
        id: invited.body.id,
        status: 'active',
        email_verified: true,
        via_idp: 'Google',
      }),
    ])
    expect(await eventsOf(s.ws, 'user.created')).toEqual([
      { user_id: invited.body.id, name: '', email: 'kay@example.com', via_idp: 'Google' },
    ])

    // An invitation past its 7 days (its token's expiry moved to the past) opens nothing.
    const late = await invite('late@example.com')
    await server.core.db
      .update(accountTokens)
      .set({ expiresAt: clock.now() - 1 })
      .where(eq(accountTokens.accountId, late.body.id))
    idp.state.next = { sub: 'l-1', email: 'late@example.com' }
    const expired = await throughIdp(s)
    expect(expired.done.res.status).toBe(403)
    expect(await expired.done.res.text()).toContain('invitation has expired')
    expect(await linksOf(late.body.id)).toEqual([])
  })

  it("links an existing account for an IdP no admin trusts only once its owner signed in to it with the account's password", async () => {
    const s = await setup('google')
    const victim = await verifiedAccount(s, 'vic@example.com', 'vic password 1')
    // An IdP a developer added asserts the victim's verified address (and MFA).
    idp.state.next = { sub: 'v-1', email: 'vic@example.com', emailVerified: true, amr: ['pwd', 'mfa'] }
    const { agent, done } = await throughIdp(s)
    expect(done.res.status).toBe(200)
    expect(done.url.pathname).toEndWith('/link')
    const html = await done.res.text()
    expect(html).toContain('This email already has an account')
    expect(html).toContain('Sign in with your password (and second factor) to link Google')
    expect(await linksOf(victim.id)).toEqual([])
    expect(await eventsOf(s.ws, 'session.started')).toEqual([])
    // Someone without the password gets no further.
    const wrong = await agent.submit(html, done.url, '/link', { password: 'not the password' }, atRp)
    expect(wrong.res.status).toBe(401)
    expect(await linksOf(victim.id)).toEqual([])

    const linked = await agent.submit(html, done.url, '/link', { password: 'vic password 1' }, atRp)
    expect(atRp(linked.url)).toBe(true)
    expect(await linksOf(victim.id)).toEqual([{ idpId: s.idpId, subject: 'v-1' }])
    expect(await eventsOf(s.ws, 'session.started')).toEqual([
      { user_id: victim.id, name: '', email: 'vic@example.com', via_idp: 'Google' },
    ])
    // Linked: the next sign-in through the IdP goes straight in.
    const again = await throughIdp(s)
    expect(atRp(again.done.url)).toBe(true)
    expect((await tokensFrom(s, again.done.url, again.verifier)).claims()!.sub).toBe(victim.id)
  })

  it("asks for the account's own second step before linking, and the IdP's amr does not replace it", async () => {
    const s = await setup('google')
    const owner = await verifiedAccount(s, 'tom@example.com', 'tom password 1')
    const code = await enrolTotp(server, clock, s.ws, owner.id)
    idp.state.next = { sub: 't-9', email: 'tom@example.com', amr: ['mfa'] }
    const { agent, done, verifier } = await throughIdp(s)
    expect(done.url.pathname).toEndWith('/link')
    const html = await done.res.text()
    const challenge = await agent.submit(html, done.url, '/link', { password: 'tom password 1' }, atRp)
    expect(challenge.url.pathname).toEndWith('/mfa')
    const challengeHtml = await challenge.res.text()
    expect(challengeHtml).toContain('<h1>Two-step verification</h1>')
    // The password alone links nothing.
    expect(await linksOf(owner.id)).toEqual([])
    const back = await agent.submit(challengeHtml, challenge.url, '/mfa', { code: code() }, atRp)
    expect(atRp(back.url)).toBe(true)
    const claims = (await tokensFrom(s, back.url, verifier)).claims()!
    expect([claims.sub, claims.amr]).toEqual([owner.id, ['pwd', 'otp']])
    expect(await linksOf(owner.id)).toEqual([{ idpId: s.idpId, subject: 't-9' }])
    // Linked, the IdP signs in to the account, whose own factor is still asked.
    clock.advance(30_000)
    const again = await throughIdp(s)
    expect(again.done.url.pathname).toEndWith('/mfa')
    expect(await again.done.res.text()).toContain('<h1>Two-step verification</h1>')
  })

  it('refuses to link an account without a password, and says how to give it one', async () => {
    const s = await setup('google')
    const first = await addIdp(s, 'oidc')
    // An account made through one IdP, then a sign-in through another with the same address.
    idp.state.next = { sub: 'w-1', email: 'wen@example.com' }
    const made = await throughIdp(s, first)
    expect(atRp(made.done.url)).toBe(true)
    idp.state.next = { sub: 'w-2', email: 'wen@example.com' }
    const { done } = await throughIdp(s, s.idpId)
    expect(done.res.status).toBe(409)
    const html = await done.res.text()
    expect(html).toContain('without a password to prove it is yours')
    expect(html).toContain('Forgot password?')
    expect(await eventsOf(s.ws, 'session.started')).toHaveLength(1)
  })

  it('asks for the login policy second step after an IdP sign-in, unless an IdP trusted with second factors asserted MFA', async () => {
    const s = await setup('google', { trust_mfa: true })
    const untrusted = await addIdp(s, 'oidc')
    // An IdP no admin trusts with second factors: its amr is not carried into the sign-in's.
    idp.state.next = { sub: 'm-0', email: 'mfa0@example.com', amr: ['pwd', 'otp'] }
    const carried = await throughIdp(s, untrusted)
    expect(atRp(carried.done.url)).toBe(true)
    expect((await tokensFrom(s, carried.done.url, carried.verifier)).claims()!.amr ?? []).toEqual([])
    await server.core.db
      .update(loginPolicies)
      .set({ mfa: 'required' })
      .where(eq(loginPolicies.workspaceId, s.ws))
    await server.core.instances.changed(s.ws)
    idp.state.next = { sub: 'm-4', email: 'mfa4@example.com', amr: ['mfa'] }
    const notTrusted = await throughIdp(s, untrusted)
    expect(notTrusted.done.url.pathname).toEndWith('/mfa')
    expect(await notTrusted.done.res.text()).toContain('Set up two-step verification')

    idp.state.next = { sub: 'm-1', email: 'mfa@example.com', amr: ['pwd'] }
    const plain = await throughIdp(s, s.idpId)
    expect(plain.done.res.status).toBe(200)
    expect(plain.done.url.pathname).toEndWith('/mfa')
    expect(await plain.done.res.text()).toContain('Set up two-step verification')

    // Two methods of one kind, or a risk signal, are not two factors.
    idp.state.next = { sub: 'm-3', email: 'mfa3@example.com', amr: ['pwd', 'rba', 'kba'] }
    const weak = await throughIdp(s, s.idpId)
    expect(weak.done.url.pathname).toEndWith('/mfa')

    idp.state.next = { sub: 'm-2', email: 'mfa2@example.com', amr: ['pwd', 'otp'] }
    const strong = await throughIdp(s, s.idpId)
    expect(atRp(strong.done.url)).toBe(true)
    const tokens = await tokensFrom(s, strong.done.url, strong.verifier)
    expect(tokens.claims()!.amr).toEqual(['pwd', 'otp'])
  })

  it('signs in through Microsoft, whose common endpoint issues tokens as the user tenant', async () => {
    const s = await setup('microsoft')
    idp.state.next = { sub: 'ms-1', email: 'satya@example.com' }
    const { done, verifier } = await throughIdp(s)
    expect(atRp(done.url)).toBe(true)
    expect((await tokensFrom(s, done.url, verifier)).claims()!.email).toBe('satya@example.com')
  })

  it('signs in through a generic OpenID Connect issuer found by discovery, with a nonce', async () => {
    const s = await setup('oidc')
    idp.state.next = { sub: 'o-1', email: 'oidc@example.com' }
    const { done, verifier } = await throughIdp(s)
    expect(atRp(done.url)).toBe(true)
    expect(idp.state.authorizeRequests.at(-1)!.params.get('nonce')).toMatch(/^[A-Za-z0-9_-]{20,}$/)
    const sub = (await tokensFrom(s, done.url, verifier)).claims()!.sub
    const [row] = await server.core.db.select().from(accounts).where(eq(accounts.id, sub))
    expect(row!.viaIdp).toBe('Stand-in SSO')
  })
})

describe('what an IdP sign-in refuses, each with a readable page', () => {
  it('a tampered state', async () => {
    const s = await setup('google')
    idp.state.next = { sub: 't-1', email: 'tamper@example.com' }
    const { agent, html, page } = await signInPage(s)
    const href = /<a href="([^"]+)" data-idp=/.exec(html)![1]!
    const toIdp = await agent.request(new URL(href.replace(/&amp;/g, '&'), page.url))
    const authorize = new URL(toIdp.headers.get('location')!)
    const atIdp = await fetch(authorize, { redirect: 'manual' })
    const callback = new URL(atIdp.headers.get('location')!)
    callback.searchParams.set('state', `${callback.searchParams.get('state')!}x`)
    const done = await agent.follow(callback, {}, atRp)
    expect(done.res.status).toBe(400)
    expect(await done.res.text()).toContain('does not match this sign-in')
    expect(await eventsOf(s.ws, 'session.started')).toEqual([])
  })

  it('an answer naming another issuer (RFC 9207 iss: a mix-up), before its code is sent anywhere', async () => {
    const s = await setup('oidc')
    idp.state.next = { sub: 'i-1', email: 'mixup@example.com', iss: 'https://attacker.example' }
    const before = idp.state.tokenRequests
    const { done } = await throughIdp(s)
    expect(done.res.status).toBe(400)
    expect(await done.res.text()).toContain('did not come from Stand-in SSO')
    expect(idp.state.tokenRequests).toBe(before)
  })

  it('an issuer whose discovery document is larger than any real one (read no further than 256 KiB)', async () => {
    const owner = await person(server.core)
    const ws = await activeWorkspace(server.core, owner.id)
    const { config } = await publicClient(server.core, server.baseUrl, ws, RP)
    const created = await callApi(server.baseUrl, owner, 'POST', `/v1/workspaces/${ws}/idps`, {
      type: 'oidc',
      name: 'Endless',
      issuer: `${idp.base}/big`,
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
    })
    expect(created.status).toBe(201)
    const { done } = await throughIdp({ owner, ws, config })
    expect(done.res.status).toBe(502)
    expect(await done.res.text()).toContain('Endless answered something that is not a sign-in')
  })

  it('a wrong nonce', async () => {
    const s = await setup('google')
    idp.state.next = { sub: 'n-1', email: 'nonce@example.com', nonce: 'not-the-one' }
    const { done } = await throughIdp(s)
    expect(done.res.status).toBe(400)
    expect(await done.res.text()).toContain('for another sign-in (nonce)')
  })

  it('an ID token for another audience', async () => {
    const s = await setup('google')
    idp.state.next = { sub: 'a-1', email: 'aud@example.com', audience: 'someone-else' }
    const { done } = await throughIdp(s)
    expect(done.res.status).toBe(400)
    expect(await done.res.text()).toContain('not valid for this sign-in')
  })

  it('a GitHub account without a verified address', async () => {
    const s = await setup('github')
    idp.state.next = {
      sub: '77',
      email: 'x@example.com',
      githubEmails: [{ email: 'unverified@example.com', primary: true, verified: false }],
    }
    const { done } = await throughIdp(s)
    expect(done.res.status).toBe(403)
    expect(await done.res.text()).toContain('no verified email address')
    const users = await callApi(server.baseUrl, s.owner, 'GET', `/v1/workspaces/${s.ws}/users`)
    expect(users.body.items).toEqual([])
  })

  it("a new account while a feature's sign-up check refuses new users; an existing one still signs in", async () => {
    const s = await setup('google')
    idp.state.next = { sub: 'g-1', email: 'first@example.com', emailVerified: true }
    expect(atRp((await throughIdp(s)).done.url)).toBe(true)
    paused.add(s.ws)
    idp.state.next = { sub: 'g-2', email: 'second@example.com', emailVerified: true }
    const { done } = await throughIdp(s)
    expect(done.res.status).toBe(403)
    expect(await done.res.text()).toContain('it has reached its limit of monthly active users')
    const users = await callApi(server.baseUrl, s.owner, 'GET', `/v1/workspaces/${s.ws}/users`)
    expect(users.body.items.map((u: { email: string }) => u.email)).toEqual(['first@example.com'])
    idp.state.next = { sub: 'g-1', email: 'first@example.com', emailVerified: true }
    expect(atRp((await throughIdp(s)).done.url)).toBe(true)
  })
})

describe('the IdP buttons on the sign-in page', () => {
  it('follow the login policy and the IdP list, on the next page served', async () => {
    const s = await setup('github')
    const on = await signInPage(s)
    expect(on.html).toContain('Continue with <span>GitHub</span>')
    // The sign-up page offers them too: an account made through an IdP needs no password here.
    const signUpPage = await on.agent.follow(new URL(`${on.page.url.pathname}/signup`, on.page.url))
    expect(signUpPage.res.status).toBe(200)
    const signUpHtml = await signUpPage.res.text()
    expect(signUpHtml).toContain('Create your account')
    expect(signUpHtml).toContain(`href="${on.page.url.pathname}/idp/${s.idpId}"`)
    await callApi(server.baseUrl, s.owner, 'PATCH', `/v1/workspaces/${s.ws}/login-policy`, {
      allow_external_idps: false,
    })
    const off = await signInPage(s)
    expect(off.html).not.toContain('data-idp=')
    // The start address of a hidden IdP is refused too.
    const start = await off.agent.follow(new URL(`${off.page.url.pathname}/idp/${s.idpId}`, off.page.url))
    expect(start.res.status).toBe(404)
    await callApi(server.baseUrl, s.owner, 'PATCH', `/v1/workspaces/${s.ws}/login-policy`, {
      allow_external_idps: true,
    })
    expect((await signInPage(s)).html).toContain('data-idp=')
    for (let i = 0; i < 2; i++) {
      const gone = await callApi(server.baseUrl, s.owner, 'DELETE', `/v1/workspaces/${s.ws}/idps/${s.idpId}`)
      expect(gone.status).toBe(200)
    }
    expect((await signInPage(s)).html).not.toContain('data-idp=')
  })
})

describe("the platform's own sign-in through a configured provider", () => {
  const atIdp = (u: URL) => u.href.startsWith(idp.base)

  it('goes straight to Google for idp_hint=google, with state, nonce and PKCE, and lands on next', async () => {
    const agent = new Agent(server.baseUrl)
    const before = idp.state.authorizeRequests.length
    const start = await agent.follow('/v1/auth/login?idp_hint=google&next=/app/workspaces/new', {}, atIdp)
    expect(start.url.href.startsWith(`${idp.base}/authorize?`)).toBe(true)
    const asked = start.url.searchParams
    expect(asked.get('client_id')).toBe(CLIENT_ID)
    expect(asked.get('redirect_uri')).toBe(`${server.baseUrl}/i/platform/broker/callback`)
    expect(asked.get('state')).toMatch(/\./)
    expect(asked.get('nonce')).toMatch(/^[A-Za-z0-9_-]{20,}$/)
    expect(asked.get('code_challenge_method')).toBe('S256')
    expect(asked.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(idp.state.authorizeRequests.length).toBe(before)

    idp.state.next = { sub: 'p-1', email: 'founder@example.com', name: 'Founder' }
    const done = await agent.follow(start.url)
    expect(done.url.pathname).toBe('/app/workspaces/new')
    expect(done.res.status).toBe(200)
    const me = await agent.request('/v1/auth/me')
    expect(((await me.json()) as { email: string }).email).toBe('founder@example.com')
  })

  it('shows the picker for an unknown hint (and for a provider not configured)', async () => {
    for (const hint of ['myspace', 'github']) {
      const agent = new Agent(server.baseUrl)
      const before = idp.state.authorizeRequests.length
      const page = await agent.follow(`/v1/auth/login?idp_hint=${hint}`, {}, atIdp)
      expect(page.res.status).toBe(200)
      const html = await page.res.text()
      expect(html).toContain('Continue with <span>Google</span>')
      expect(html).toContain('name="password"')
      expect(idp.state.authorizeRequests.length).toBe(before)
    }
  })

  it('offers each configured provider on the sign-up entry page, with its hint and next', async () => {
    const res = await fetch(`${server.baseUrl}/app/signup`)
    expect(res.status).toBe(200)
    const html = await res.text()
    expect(html).toContain('href="/v1/auth/login?idp_hint=google&next=%2Fapp%2Fworkspaces%2Fnew"')
    expect(html).toContain('href="/v1/auth/login?next=%2Fapp%2Fworkspaces%2Fnew"')
    expect(html).not.toContain('idp_hint=github')
  })
})
