import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import { and, asc, eq } from 'drizzle-orm'
import type { ParsedMail } from 'mailparser'
import * as oidc from 'openid-client'
import { events } from '../src/events/schema'
import { createLoginPolicyService } from '../src/features/login-policy/service'
import type { Workspace } from '../src/features/workspaces/service'
import { ManualClock } from '../src/shared/clock'
import { Agent } from './support/browserless'
import { TEST_ACTOR } from './support/core'
import { activeWorkspace, pkceAuthorization, registerApp } from './support/instances'
import { startTestServer, type TestServer } from './support/server'
import { type SmtpSink, startSmtpServer } from './support/smtp'
import { enrolTotp } from './support/totp'
import { json, type PlatformUser, signUpUser } from './support/users'

// Issue 20, items 3 and 4: a workspace's users (list, invite, delete, reset MFA) through the API,
// invitations end to end through a real SMTP server and openid-client, and the user.* and
// session.* events in the outbox. Time is the server's ManualClock, started at the real time
// because oidc-provider signs with Date.now.
const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR
const RP = 'https://rp.example.com'
const atRp = (u: URL) => u.href.startsWith(RP)

const clock = new ManualClock(Date.now())
let smtp: SmtpSink
let server: TestServer

beforeAll(async () => {
  smtp = await startSmtpServer()
  server = await startTestServer({ SMTP_URL: smtp.url }, undefined, { clock })
})
afterAll(async () => {
  await server.stop()
  await smtp.close()
})
beforeEach(() => clock.set(Date.now()))

interface Setup {
  owner: PlatformUser
  ws: string
  config: oidc.Configuration
  users: string
}

/** A platform user owning an active workspace with a public app registered at its instance. */
async function setup(): Promise<Setup> {
  const owner = await signUpUser(server, {
    email: `owner-${crypto.randomUUID()}@example.com`,
    password: 'an owner password',
    name: 'Owner',
  })
  const ws = await activeWorkspace(server.core, owner.id)
  const app = await registerApp(server.core, ws, {
    type: 'spa',
    redirectUris: [`${RP}/cb`],
    postLogoutRedirectUris: [`${RP}/bye`],
  })
  const config = await oidc.discovery(
    new URL(`${server.baseUrl}/i/${ws}`),
    app.clientId,
    undefined,
    oidc.None(),
    { execute: [oidc.allowInsecureRequests] },
  )
  return { owner, ws, config, users: `/v1/workspaces/${ws}/users` }
}

const recipients = (mail: ParsedMail) =>
  [mail.to ?? []].flat().flatMap((a) => a.value.map((v) => v.address?.toLowerCase()))

/** The one link of the invitation mailed to `address`, once the mail job ran. */
async function invitationLink(address: string): Promise<URL> {
  await server.tick()
  const mail = await smtp.waitFor(
    (m) => m.subject?.startsWith('You are invited') === true && recipients(m).includes(address),
  )
  const links = mail.text?.match(/https?:\/\/\S+/g) ?? []
  expect(links).toHaveLength(1)
  return new URL(links[0]!)
}

/** Opens the invitation link in a fresh browser and accepts it with `password`: the answer. */
async function accept(link: URL, password: string, name?: string) {
  const agent = new Agent(server.baseUrl)
  const page = await agent.follow(link)
  const html = await page.res.text()
  if (page.res.status !== 200) return { status: page.res.status, html }
  expect(html).toContain('<h1>Accept your invitation</h1>')
  const done = await agent.submit(html, page.url, '/accept-invite', { password, ...(name ? { name } : {}) })
  return { status: done.res.status, html: await done.res.text() }
}

/**
 * A hosted sign-in with openid-client (code + PKCE, offline_access): the tokens and the browser.
 * `totp` answers the second step of an account with an authenticator app.
 */
async function signIn(s: Setup, email: string, password: string, totp?: () => string) {
  const agent = new Agent(server.baseUrl)
  const { url, verifier } = await pkceAuthorization(
    s.config,
    `${RP}/cb`,
    'openid email profile offline_access',
  )
  const page = await agent.follow(url, {}, atRp)
  const html = await page.res.text()
  expect(html).toContain('<h1>Sign in</h1>')
  let back = await agent.submit(html, page.url, '/login', { email, password }, atRp)
  if (totp) {
    const challenge = await back.res.text()
    expect(challenge).toContain('<h1>Two-step verification</h1>')
    back = await agent.submit(challenge, back.url, '/mfa', { code: totp() }, atRp)
  }
  expect(atRp(back.url)).toBe(true)
  const tokens = await oidc.authorizationCodeGrant(s.config, back.url, {
    pkceCodeVerifier: verifier,
    idTokenExpected: true,
  })
  return { tokens, agent }
}

/** An authorization request with prompt=none in `agent`'s browser: where the instance sends it back. */
async function silentSignIn(s: Setup, agent: Agent): Promise<URL> {
  const url = oidc.buildAuthorizationUrl(s.config, {
    redirect_uri: `${RP}/cb`,
    scope: 'openid',
    prompt: 'none',
    code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
    code_challenge_method: 'S256',
  })
  const back = await agent.follow(url, {}, atRp)
  expect(atRp(back.url)).toBe(true)
  return back.url
}

/** Invites `email` and accepts the invitation with `password`: the user's id. */
async function activeUser(s: Setup, email: string, password: string, name = ''): Promise<string> {
  const invited = await json(s.owner.agent, 'POST', `${s.users}/invite`, { email, name })
  expect(invited.status).toBe(201)
  const done = await accept(await invitationLink(email), password)
  expect(done.status).toBe(200)
  return invited.body.id
}

/** The workspace's events of `type`, oldest first, as the outbox holds them. */
const eventsOf = async (ws: string, type: string) =>
  server.core.db
    .select({ data: events.data })
    .from(events)
    .where(and(eq(events.workspaceId, ws), eq(events.type, type)))
    .orderBy(asc(events.createdAt), asc(events.id))
    .then((rows) => rows.map((r) => r.data))

describe('the users API', () => {
  it('invites: 201 UserInvited for 7 days, 409 for a known address in any case, 422 per field', async () => {
    const s = await setup()
    const sent = await json(s.owner.agent, 'POST', `${s.users}/invite`, {
      email: 'Grace@Example.com',
      name: 'Grace Hopper',
    })
    expect(sent.status).toBe(201)
    expect(Object.keys(sent.body).sort()).toEqual(['email', 'expires_at', 'id', 'invited_at', 'status'])
    expect(sent.body).toMatchObject({ email: 'grace@example.com', status: 'invited' })
    expect(sent.body.id).toMatch(/^usr_[0-9A-HJKMNP-TV-Z]{26}$/)
    const invitedAt = Date.parse(sent.body.invited_at)
    expect(invitedAt).toBe(clock.now())
    expect(Date.parse(sent.body.expires_at) - invitedAt).toBe(7 * DAY)

    const again = await json(s.owner.agent, 'POST', `${s.users}/invite`, { email: 'grace@EXAMPLE.com' })
    expect(again.status).toBe(409)
    expect(again.body.detail).toContain('already exists')

    const bad = await json(s.owner.agent, 'POST', `${s.users}/invite`, { email: 'not-an-address' })
    expect(bad.status).toBe(422)
    expect(bad.body.detail[0].loc).toEqual(['body', 'email'])
    const missing = await json(s.owner.agent, 'POST', `${s.users}/invite`, { name: 'No Email' })
    expect(missing.status).toBe(422)
    expect(missing.body.detail[0].loc).toEqual(['body', 'email'])

    const listed = await json(s.owner.agent, 'GET', s.users)
    expect(listed.status).toBe(200)
    expect(listed.body).toEqual({
      items: [
        {
          id: sent.body.id,
          email: 'grace@example.com',
          name: 'Grace Hopper',
          email_verified: false,
          status: 'invited',
          via_idp: null,
          created_at: sent.body.invited_at,
          last_sign_in_at: null,
        },
      ],
      total: 1,
      next_cursor: null,
    })
  })

  it('lists in pages with an opaque cursor, and finds by email or name prefix in any case', async () => {
    const s = await setup()
    const people = [
      ['ada@example.com', 'Ada Lovelace'],
      ['alan@example.com', 'Alan Turing'],
      ['grace@example.com', 'Grace Hopper'],
      ['edsger@example.com', 'Edsger Dijkstra'],
      ['barbara@example.com', 'Barbara Liskov'],
    ]
    const ids: string[] = []
    for (const [email, name] of people) {
      const r = await json(s.owner.agent, 'POST', `${s.users}/invite`, { email, name })
      expect(r.status).toBe(201)
      ids.push(r.body.id)
    }

    const seen: string[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const query: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : '?limit=2'
      const page = await json(s.owner.agent, 'GET', `${s.users}${query}`)
      expect(page.status).toBe(200)
      expect(page.body.total).toBe(5)
      expect(page.body.items.length).toBeLessThanOrEqual(2)
      seen.push(...page.body.items.map((u: { id: string }) => u.id))
      cursor = page.body.next_cursor
      pages++
    } while (cursor)
    expect(pages).toBe(3)
    expect(seen).toEqual(ids)

    const find = async (q: string) => {
      const r = await json(s.owner.agent, 'GET', `${s.users}?q=${encodeURIComponent(q)}`)
      expect(r.status).toBe(200)
      return { total: r.body.total, emails: r.body.items.map((u: { email: string }) => u.email) }
    }
    expect(await find('AL')).toEqual({ total: 1, emails: ['alan@example.com'] })
    expect(await find('a')).toEqual({ total: 2, emails: ['ada@example.com', 'alan@example.com'] })
    // A name prefix, in another case; not a match in the middle of a word.
    expect(await find('hopp')).toEqual({ total: 0, emails: [] })
    expect(await find('grace h')).toEqual({ total: 1, emails: ['grace@example.com'] })
    expect(await find('barbara L')).toEqual({ total: 1, emails: ['barbara@example.com'] })
    // LIKE's wildcards are plain characters.
    expect(await find('%')).toEqual({ total: 0, emails: [] })
    expect(await find('_da')).toEqual({ total: 0, emails: [] })

    const limited = await json(s.owner.agent, 'GET', `${s.users}?q=a&limit=1`)
    expect(limited.body.items.map((u: { email: string }) => u.email)).toEqual(['ada@example.com'])
    const rest = await json(
      s.owner.agent,
      'GET',
      `${s.users}?q=a&limit=1&cursor=${encodeURIComponent(limited.body.next_cursor)}`,
    )
    expect(rest.body).toMatchObject({ total: 2, next_cursor: null })
    expect(rest.body.items.map((u: { email: string }) => u.email)).toEqual(['alan@example.com'])

    for (const query of ['limit=0', 'limit=201', 'limit=x', 'limit=1.5']) {
      const r = await json(s.owner.agent, 'GET', `${s.users}?${query}`)
      expect(r.status).toBe(422)
      expect(r.body.detail[0].loc).toEqual(['query', 'limit'])
    }
    const badCursor = await json(s.owner.agent, 'GET', `${s.users}?cursor=%25%25not-ours`)
    expect(badCursor.status).toBe(422)
    expect(badCursor.body.detail[0].loc).toEqual(['query', 'cursor'])
  })

  it("is the owner's alone: another platform user gets 404, no session 401", async () => {
    const s = await setup()
    const other = await signUpUser(server, {
      email: `other-${crypto.randomUUID()}@example.com`,
      password: 'another password',
      name: 'Other',
    })
    expect((await json(other.agent, 'GET', s.users)).status).toBe(404)
    expect((await json(other.agent, 'POST', `${s.users}/invite`, { email: 'x@example.com' })).status).toBe(
      404,
    )
    expect((await fetch(`${server.baseUrl}${s.users}`)).status).toBe(401)
  })

  it('deletes idempotently (200 twice); the deleted user is signed out and their refresh token fails at once', async () => {
    const s = await setup()
    const password = 'linus password 1'
    const id = await activeUser(s, 'linus@example.com', password, 'Linus')
    const { tokens } = await signIn(s, 'linus@example.com', password)
    expect(tokens.refresh_token).toBeTruthy()
    // The refresh token works before the delete (rotated: keep the new one).
    const refreshed = await oidc.refreshTokenGrant(s.config, tokens.refresh_token!)
    expect(refreshed.refresh_token).toBeTruthy()

    const first = await json(s.owner.agent, 'DELETE', `${s.users}/${id}`)
    expect(first.status).toBe(200)
    expect(first.body).toEqual({ deleted: true })
    const second = await json(s.owner.agent, 'DELETE', `${s.users}/${id}`)
    expect(second.status).toBe(200)
    expect(second.body).toEqual({ deleted: true })

    const refused = await oidc.refreshTokenGrant(s.config, refreshed.refresh_token!).then(
      () => null,
      (e: oidc.ResponseBodyError) => e,
    )
    expect(refused?.error).toBe('invalid_grant')
    expect((await json(s.owner.agent, 'GET', s.users)).body).toEqual({
      items: [],
      total: 0,
      next_cursor: null,
    })
    const rows = await server.core.store.query<{ n: number }>(
      'SELECT CAST(count(*) AS INTEGER) AS n FROM oidc_payloads WHERE instance_id = $1 AND account_id = $2',
      [s.ws, id],
    )
    expect(rows[0]!.n).toBe(0)
    // The address is free again: it can be invited anew.
    expect(
      (await json(s.owner.agent, 'POST', `${s.users}/invite`, { email: 'linus@example.com' })).status,
    ).toBe(201)
  })

  it("resets a user's MFA (200), 404 for a user that is not the workspace's", async () => {
    const s = await setup()
    const invited = await json(s.owner.agent, 'POST', `${s.users}/invite`, { email: 'mfa@example.com' })
    const reset = await json(s.owner.agent, 'DELETE', `${s.users}/${invited.body.id}/mfa`)
    expect(reset.status).toBe(200)
    expect(reset.body).toEqual({ reset: true })
    const unknown = await json(s.owner.agent, 'DELETE', `${s.users}/usr_01J00000000000000000000000/mfa`)
    expect(unknown.status).toBe(404)
    // Another workspace's user is unknown here.
    const t = await setup()
    expect((await json(t.owner.agent, 'DELETE', `${t.users}/${invited.body.id}/mfa`)).status).toBe(404)
  })
})

describe('an MFA reset', () => {
  it("ends the user's sessions, grants and tokens at the instance at once, and no one else's", async () => {
    const s = await setup()
    const id = await activeUser(s, 'ruth@example.com', 'ruth password 1', 'Ruth')
    const totp = await enrolTotp(server, clock, s.ws, id)
    const other = await activeUser(s, 'hedy@example.com', 'hedy password 1', 'Hedy')
    const ruth = await signIn(s, 'ruth@example.com', 'ruth password 1', totp)
    expect(ruth.tokens.claims()?.amr).toEqual(['pwd', 'otp'])
    const hedy = await signIn(s, 'hedy@example.com', 'hedy password 1')
    // Both sessions sign in silently before the reset, and both refresh tokens work (rotated).
    expect((await silentSignIn(s, ruth.agent)).searchParams.get('code')).toBeTruthy()
    expect((await silentSignIn(s, hedy.agent)).searchParams.get('code')).toBeTruthy()
    const ruthRefresh = (await oidc.refreshTokenGrant(s.config, ruth.tokens.refresh_token!)).refresh_token!
    const hedyRefresh = (await oidc.refreshTokenGrant(s.config, hedy.tokens.refresh_token!)).refresh_token!

    const reset = await json(s.owner.agent, 'DELETE', `${s.users}/${id}/mfa`)
    expect(reset.status).toBe(200)

    // Whoever held Ruth's session or tokens holds nothing now.
    const refused = await oidc.refreshTokenGrant(s.config, ruthRefresh).then(
      () => null,
      (e: oidc.ResponseBodyError) => e,
    )
    expect(refused?.error).toBe('invalid_grant')
    expect((await silentSignIn(s, ruth.agent)).searchParams.get('error')).toBe('login_required')
    const userinfo = await oidc.fetchUserInfo(s.config, ruth.tokens.access_token, id).then(
      () => null,
      (e: oidc.WWWAuthenticateChallengeError) => e,
    )
    expect(userinfo?.status).toBe(401)
    const left = await server.core.store.query<{ n: number }>(
      'SELECT CAST(count(*) AS INTEGER) AS n FROM oidc_payloads WHERE instance_id = $1 AND account_id = $2',
      [s.ws, id],
    )
    expect(left[0]!.n).toBe(0)
    // Her password still signs her in, now without a second factor.
    const again = await signIn(s, 'ruth@example.com', 'ruth password 1')
    expect(again.tokens.claims()?.amr).toEqual(['pwd'])

    // Hedy's session and tokens are untouched.
    expect((await silentSignIn(s, hedy.agent)).searchParams.get('code')).toBeTruthy()
    expect((await oidc.refreshTokenGrant(s.config, hedyRefresh)).refresh_token).toBeTruthy()
    expect((await oidc.fetchUserInfo(s.config, hedy.tokens.access_token, other)).sub).toBe(other)
  })
})

describe('an invitation', () => {
  it('is mailed, accepted once with a password under the policy, and the user then signs in with openid-client', async () => {
    const s = await setup()
    const invited = await json(s.owner.agent, 'POST', `${s.users}/invite`, {
      email: 'katherine@example.com',
      name: 'Katherine',
    })
    expect(invited.status).toBe(201)
    const link = await invitationLink('katherine@example.com')
    expect(link.href).toStartWith(`${server.baseUrl}/i/${s.ws}/accept-invite?token=`)
    // The token is in the mail only: stored as a hash.
    const token = link.searchParams.get('token')!
    const stored = await server.core.store.query<{ token_hash: string }>(
      "SELECT token_hash FROM account_tokens WHERE account_id = $1 AND purpose = 'invite'",
      [invited.body.id],
    )
    expect(stored).toHaveLength(1)
    expect(stored[0]!.token_hash).not.toBe(token)

    // Invited: no password yet, so no sign-in with any.
    const agent = new Agent(server.baseUrl)
    const { url } = await pkceAuthorization(s.config, `${RP}/cb`)
    const page = await agent.follow(url, {}, atRp)
    const refused = await agent.submit(await page.res.text(), page.url, '/login', {
      email: 'katherine@example.com',
      password: 'anything at all',
    })
    expect(refused.res.status).toBe(401)

    // The form states the rule it enforces.
    const form = await new Agent(server.baseUrl).follow(link)
    const html = await form.res.text()
    expect(html).toContain('At least 8 characters.')
    expect(html).toContain('minlength="8"')
    expect(html).toContain('value="Katherine"')
    const short = await accept(link, 'short')
    expect(short.status).toBe(422)
    expect(short.html).toContain('Use at least 8 characters.')

    const done = await accept(link, 'katherine password', 'Katherine Johnson')
    expect(done.status).toBe(200)
    expect(done.html).toContain('Invitation accepted')
    expect(done.html).toContain('You can now sign in')

    const listed = (await json(s.owner.agent, 'GET', s.users)).body.items[0]
    expect(listed).toMatchObject({
      id: invited.body.id,
      name: 'Katherine Johnson',
      status: 'active',
      email_verified: true,
      last_sign_in_at: null,
    })

    const { tokens } = await signIn(s, 'katherine@example.com', 'katherine password')
    const claims = tokens.claims()!
    expect(claims.sub).toBe(invited.body.id)
    expect(claims.email).toBe('katherine@example.com')
    expect(claims.email_verified).toBe(true)
    const after = (await json(s.owner.agent, 'GET', s.users)).body.items[0]
    expect(Date.parse(after.last_sign_in_at)).toBe(clock.now())

    // The link worked once.
    const second = await accept(link, 'another password')
    expect(second.status).toBe(400)
    expect(second.html).toContain('invalid, expired or already used')
  })
})

describe('events', () => {
  it('keeps the invitation the only way in: no reset link for an invited address, no password acceptance where passwords are off', async () => {
    const s = await setup()
    await activeUser(s, 'mary.ross@example.com', 'a first password 1')
    expect(
      (await json(s.owner.agent, 'POST', `${s.users}/invite`, { email: 'dorothy.vaughan@example.com' }))
        .status,
    ).toBe(201)
    const link = await invitationLink('dorothy.vaughan@example.com')
    const forgot = async (email: string) => {
      const agent = new Agent(server.baseUrl)
      const page = await agent.follow(new URL(`${server.baseUrl}/i/${s.ws}/forgot-password`))
      const done = await agent.submit(await page.res.text(), page.url, '/forgot-password', { email })
      expect(done.res.status).toBe(200)
    }
    // The same answer for both; only the active user gets a link (its mail proves the job ran).
    await forgot('dorothy.vaughan@example.com')
    await forgot('mary.ross@example.com')
    await server.tick()
    await smtp.waitFor(
      (m) => m.subject === 'Reset your password' && recipients(m).includes('mary.ross@example.com'),
    )
    expect(
      smtp.messages.filter(
        (m) => m.subject === 'Reset your password' && recipients(m).includes('dorothy.vaughan@example.com'),
      ),
    ).toEqual([])

    // A workspace that signs in through external providers only takes no password at acceptance.
    await createLoginPolicyService(server.core).update(
      { id: s.ws, state: 'active' } as Workspace,
      TEST_ACTOR,
      {
        allow_password: false,
      },
    )
    const refused = await accept(link, 'a password anyway 1')
    expect(refused.status).toBe(403)
    const [row] = await server.core.store.query<{ password_hash: string | null; status: string }>(
      'SELECT password_hash, status FROM accounts WHERE instance_id = $1 AND email = $2',
      [s.ws, 'dorothy.vaughan@example.com'],
    )
    expect(row).toEqual({ password_hash: null, status: 'invited' })
  })

  it('records user.created (invitation accepted, hosted sign-up), user.updated (email verified) and user.deleted with the SPEC payload', async () => {
    const s = await setup()
    const id = await activeUser(s, 'ida@example.com', 'ida password 123', 'Ida')
    const created = await eventsOf(s.ws, 'user.created')
    expect(created).toEqual([{ user_id: id, name: 'Ida', email: 'ida@example.com', via_idp: null }])

    // A hosted sign-up at the instance, then its verification link.
    const agent = new Agent(server.baseUrl)
    const { url } = await pkceAuthorization(s.config, `${RP}/cb`)
    const first = await agent.follow(url, {}, atRp)
    const signInHtml = await first.res.text()
    const signUpHref = signInHtml.match(/href="([^"]*\/signup)"/)![1]!
    const signUpPage = await agent.follow(new URL(signUpHref.replace(/&amp;/g, '&'), first.url))
    const back = await agent.submit(
      await signUpPage.res.text(),
      signUpPage.url,
      '/signup',
      { email: 'sam@example.com', password: 'sam password 12', name: 'Sam' },
      atRp,
    )
    expect(atRp(back.url)).toBe(true)
    const listed = (await json(s.owner.agent, 'GET', `${s.users}?q=sam`)).body.items[0]
    const sam = { user_id: listed.id, name: 'Sam', email: 'sam@example.com', via_idp: null }
    expect((await eventsOf(s.ws, 'user.created')).at(-1)).toEqual(sam)

    await server.tick()
    const mail = await smtp.waitFor(
      (m) => m.subject === 'Verify your email address' && recipients(m).includes('sam@example.com'),
    )
    const verify = await new Agent(server.baseUrl).follow(mail.text!.match(/https?:\/\/\S+/)![0])
    expect(verify.res.status).toBe(200)
    expect(await eventsOf(s.ws, 'user.updated')).toEqual([sam])
    // Following it again changes nothing, and records nothing.
    await new Agent(server.baseUrl).follow(mail.text!.match(/https?:\/\/\S+/)![0])
    expect(await eventsOf(s.ws, 'user.updated')).toHaveLength(1)

    expect((await json(s.owner.agent, 'DELETE', `${s.users}/${id}`)).status).toBe(200)
    expect((await json(s.owner.agent, 'DELETE', `${s.users}/${id}`)).status).toBe(200)
    expect(await eventsOf(s.ws, 'user.deleted')).toEqual([
      { user_id: id, name: 'Ida', email: 'ida@example.com', via_idp: null },
    ])

    // Never a secret in a payload, and nothing for the platform instance.
    const all = await server.core.store.query<{ data: unknown }>(
      'SELECT data FROM events WHERE workspace_id = $1',
      [s.ws],
    )
    for (const { data } of all)
      expect(String(typeof data === 'string' ? data : JSON.stringify(data))).not.toMatch(
        /password|token|hash|code/i,
      )
    const platform = await server.core.store.query('SELECT id FROM events WHERE workspace_id = $1', [
      'platform',
    ])
    expect(platform).toHaveLength(0)
  })

  it('records session.started on sign-in and session.ended on a hosted logout', async () => {
    const s = await setup()
    const id = await activeUser(s, 'mary@example.com', 'mary password 1', 'Mary')
    const { tokens, agent } = await signIn(s, 'mary@example.com', 'mary password 1')
    const mary = { user_id: id, name: 'Mary', email: 'mary@example.com', via_idp: null }
    expect(await eventsOf(s.ws, 'session.started')).toEqual([mary])
    expect(await eventsOf(s.ws, 'session.ended')).toEqual([])

    const logout = oidc.buildEndSessionUrl(s.config, {
      id_token_hint: tokens.id_token!,
      post_logout_redirect_uri: `${RP}/bye`,
    })
    const page = await agent.follow(logout, {}, atRp)
    const html = await page.res.text()
    expect(html).toContain('Signing you out')
    const done = await agent.submit(html, page.url, '/session/end/confirm', { logout: 'yes' }, atRp)
    expect(done.url.href).toStartWith(`${RP}/bye`)
    expect(await eventsOf(s.ws, 'session.ended')).toEqual([mary])
  })

  it('records session.ended for a session the purge finds expired; an invitation link is refused after 7 days', async () => {
    const s = await setup()
    const id = await activeUser(s, 'joan@example.com', 'joan password 1', 'Joan')
    await signIn(s, 'joan@example.com', 'joan password 1')
    const invited = await json(s.owner.agent, 'POST', `${s.users}/invite`, { email: 'late@example.com' })
    expect(invited.status).toBe(201)
    const link = await invitationLink('late@example.com')

    // Just before 7 days the link still opens the form; the session is still live.
    clock.advance(7 * DAY - MINUTE)
    const open = await new Agent(server.baseUrl).follow(link)
    expect(open.res.status).toBe(200)
    await server.tick()
    expect(await eventsOf(s.ws, 'session.ended')).toEqual([])

    // The session lifetime (the policy's 168 hours) and the invitation's 7 days have passed.
    clock.advance(MINUTE + HOUR)
    const expired = await accept(link, 'late password 1')
    expect(expired.status).toBe(400)
    expect(expired.html).toContain('invalid, expired or already used')
    await server.tick()
    expect(await eventsOf(s.ws, 'session.ended')).toEqual([
      { user_id: id, name: 'Joan', email: 'joan@example.com', via_idp: null },
    ])
    const sessions = await server.core.store.query<{ n: number }>(
      "SELECT CAST(count(*) AS INTEGER) AS n FROM oidc_payloads WHERE instance_id = $1 AND model = 'Session'",
      [s.ws],
    )
    expect(sessions[0]!.n).toBe(0)
    // A later purge does not record it again.
    clock.advance(10 * MINUTE)
    await server.tick()
    expect(await eventsOf(s.ws, 'session.ended')).toHaveLength(1)
  })
})
