import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import { asc, eq } from 'drizzle-orm'
import type { ParsedMail } from 'mailparser'
import { auditLog } from '../src/audit/schema'
import { createSession, sessionCookieName } from '../src/features/auth/sessions'
import { workspaces } from '../src/features/workspaces/schema'
import { PLATFORM, signUp } from '../src/identity'
import { markEmailVerified } from '../src/identity/accounts'
import { ManualClock } from '../src/shared/clock'
import { activeWorkspace } from './support/instances'
import { startTestServer, type TestServer } from './support/server'
import { type SmtpSink, startSmtpServer } from './support/smtp'
import { type Json, signUpUser, verifyPlatformEmail } from './support/users'

// Issue 25, item 1 (members and roles) through the API and the invitation page: adding accounts,
// inviting addresses by mail (a real SMTP server), accepting as the right account only, expiry on
// the server's ManualClock, the owner rules and the last owner (under concurrency too), access that
// follows a role change on the very next request, and the audit rows each change writes.
const MINUTE = 60_000
const DAY = 24 * 60 * MINUTE

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

/** A platform account with a dashboard session, as the sign-in callback leaves one. */
interface Person {
  id: string
  email: string
  csrf: string
  cookie: string
}

/** A platform account that proved its address (as the verification link leaves it), signed in. */
async function person(name: string, email = `${name.toLowerCase()}-${crypto.randomUUID()}@example.com`) {
  const account = await signUp(server.core, PLATFORM, { email, password: 'a long password 1', name })
  await markEmailVerified(server.core, account)
  return signedIn({ id: account.id, email: account.email })
}

/** A new dashboard session of the account, from the clock's now (sessions last 7 days, as links do). */
async function signedIn(account: { id: string; email: string }): Promise<Person> {
  const { cookie, csrfToken } = await createSession(server.core, account.id, null)
  return { ...account, csrf: csrfToken, cookie: `${sessionCookieName(server.core)}=${cookie}` }
}

/** A JSON call with the person's session (or a bearer token). */
async function api(who: Person | { bearer: string }, method: string, path: string, body?: unknown) {
  const auth: Record<string, string> =
    'bearer' in who
      ? { authorization: `Bearer ${who.bearer}` }
      : { cookie: who.cookie, 'x-csrf-token': who.csrf }
  const res = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { accept: 'application/json', ...auth, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  })
  return { status: res.status, body: (await res.json()) as Json }
}

const members = (ws: string) => `/v1/workspaces/${ws}/members`

/** A workspace `owner` created; more members added through the API with their roles. */
async function workspaceOf(owner: Person, others: [Person, string][] = []): Promise<string> {
  const ws = await activeWorkspace(server.core, owner.id)
  for (const [p, role] of others) {
    const added = await api(owner, 'POST', members(ws), { email: p.email, role })
    expect(added.status).toBe(201)
  }
  return ws
}

/** The workspace's audit rows, oldest first: what a change wrote (the audit-log API is not ours). */
async function auditOf(ws: string) {
  const rows = await server.core.db
    .select()
    .from(auditLog)
    .where(eq(auditLog.workspaceId, ws))
    .orderBy(asc(auditLog.at), asc(auditLog.id))
  return rows.map((r) => ({
    actor: r.actor,
    action: r.action,
    target: `${r.targetType}:${r.targetId}`,
    changes: r.changes,
  }))
}

const roles = async (owner: Person, ws: string) =>
  Object.fromEntries(
    ((await api(owner, 'GET', members(ws))).body.items as Json[]).map((m) => [
      m.email,
      `${m.status}:${m.role}`,
    ]),
  )

const recipients = (mail: ParsedMail) =>
  [mail.to ?? []].flat().flatMap((a) => a.value.map((v) => v.address?.toLowerCase()))

/** The link of the invitation mailed to `address`, once the mail job ran. */
async function invitationLink(address: string): Promise<string> {
  await server.tick()
  const mail = await smtp.waitFor(
    (m) => m.subject?.startsWith('Join ') === true && recipients(m).includes(address),
  )
  const links = mail.text?.match(/https?:\/\/\S+/g) ?? []
  expect(links).toHaveLength(1)
  return links[0]!
}

const tokenOf = (link: string) => new URL(link).searchParams.get('token')!

/** The invitation page as `who` (or a signed-out browser) sees it. */
async function openPage(link: string, who?: Person) {
  const res = await fetch(link, { headers: who ? { cookie: who.cookie } : {}, redirect: 'manual' })
  return { status: res.status, html: await res.text() }
}

/** The page's Accept button: a form post with the session's CSRF token. */
async function acceptAs(who: Person, link: string) {
  const res = await fetch(`${server.baseUrl}/app/invitation`, {
    method: 'POST',
    headers: { cookie: who.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: tokenOf(link), _csrf: who.csrf }).toString(),
    redirect: 'manual',
  })
  return { status: res.status, location: res.headers.get('location'), html: await res.text() }
}

describe('adding members', () => {
  it('adds an existing platform account at once, in any case, and refuses one already there (409)', async () => {
    const owner = await person('Owner')
    const bob = await person('Bob')
    const ws = await workspaceOf(owner)

    const added = await api(owner, 'POST', members(ws), {
      email: bob.email.toUpperCase(),
      role: 'developer',
    })
    expect(added.status).toBe(201)
    expect(added.body).toEqual({
      account_id: bob.id,
      invitation_id: null,
      email: bob.email,
      name: 'Bob',
      role: 'developer',
      status: 'active',
      created_at: new Date(clock.now()).toISOString(),
      expires_at: null,
    })
    // Bob's access comes with it: the workspace, and it in his list.
    expect((await api(bob, 'GET', `/v1/workspaces/${ws}`)).status).toBe(200)
    expect((await api(bob, 'GET', '/v1/workspaces')).body.items.map((w: Json) => w.id)).toEqual([ws])

    const listed = await api(bob, 'GET', members(ws))
    expect(listed.status).toBe(200)
    expect(listed.body.total).toBe(2)
    expect(listed.body.items.map((m: Json) => [m.account_id, m.role])).toEqual([
      [owner.id, 'owner'],
      [bob.id, 'developer'],
    ])

    const again = await api(owner, 'POST', members(ws), { email: bob.email, role: 'viewer' })
    expect(again.status).toBe(409)
    expect(again.body).toEqual({ detail: 'This account is already a member of the workspace' })

    expect((await api(owner, 'POST', members(ws), { email: 'not-an-address', role: 'viewer' })).status).toBe(
      422,
    )
    expect((await api(owner, 'POST', members(ws), { email: bob.email, role: 'superuser' })).status).toBe(422)

    expect(await auditOf(ws)).toEqual([
      {
        actor: `user:${owner.id}`,
        action: 'member.added',
        target: `member:${bob.id}`,
        changes: { role: { to: 'developer' } },
      },
    ])
  })
})

describe('an account that has not proved its address', () => {
  it('is invited by mail, never added at once: anyone may sign up with an address they do not own', async () => {
    const owner = await person('Owner')
    const email = `squatted-${crypto.randomUUID()}@example.com`
    const squatter = await signUp(server.core, PLATFORM, {
      email,
      password: 'a long password 1',
      name: 'Mallory',
    })
    const ws = await workspaceOf(owner)
    const added = await api(owner, 'POST', members(ws), { email, role: 'admin' })
    expect(added.status).toBe(201)
    expect(added.body).toMatchObject({ account_id: null, status: 'invited', email })
    const mallory = await signedIn({ id: squatter.id, email })
    expect((await api(mallory, 'GET', `/v1/workspaces/${ws}`)).status).toBe(404)
  })
})

describe('invitations', () => {
  it('mails an unknown address a link that joins the account signing up with it, once', async () => {
    const owner = await person('Owner')
    const ws = await workspaceOf(owner)
    const email = `newcomer-${crypto.randomUUID()}@example.com`

    const invited = await api(owner, 'POST', members(ws), { email, role: 'viewer' })
    expect(invited.status).toBe(201)
    expect(invited.body).toMatchObject({
      account_id: null,
      email,
      name: '',
      role: 'viewer',
      status: 'invited',
    })
    expect(invited.body.invitation_id).toStartWith('inv_')
    expect(Date.parse(invited.body.expires_at) - Date.parse(invited.body.created_at)).toBe(7 * DAY)
    const link = await invitationLink(email)
    expect(link).toStartWith(`${server.baseUrl}/app/invitation?token=`)

    // Signed out: the workspace, the role, and the way to sign in (or up) that comes back here.
    const signedOut = await openPage(link)
    expect(signedOut.status).toBe(200)
    expect(signedOut.html).toContain('Join Acme')
    expect(signedOut.html).toContain('You are invited to the workspace Acme as viewer.')
    const next = `/app/invitation?token=${encodeURIComponent(tokenOf(link))}`
    expect(signedOut.html).toContain(`href="/v1/auth/login?next=${encodeURIComponent(next)}"`)
    const login = await fetch(`${server.baseUrl}/v1/auth/login?next=${encodeURIComponent(next)}`, {
      redirect: 'manual',
    })
    expect(login.status).toBe(302)

    // The address signs up (in any case), then accepts.
    const newcomer = await person('Newcomer', email.toUpperCase())
    const page = await openPage(link, newcomer)
    expect(page.status).toBe(200)
    expect(page.html).toContain('Accept invitation')
    const accepted = await acceptAs(newcomer, link)
    expect(accepted.status).toBe(303)
    expect(accepted.location).toBe(`/app/workspaces/${ws}`)
    expect(await roles(owner, ws)).toEqual({ [owner.email]: 'active:owner', [email]: 'active:viewer' })
    expect((await api(newcomer, 'GET', `/v1/workspaces/${ws}`)).status).toBe(200)

    // Used up: the link opens nothing any more.
    const reused = await acceptAs(newcomer, link)
    expect(reused.status).toBe(404)
    expect(reused.html).toContain('This invitation link is not valid')
    expect((await openPage(link, newcomer)).status).toBe(404)

    const [first, joined] = await auditOf(ws)
    expect(first).toEqual({
      actor: `user:${owner.id}`,
      action: 'member.invited',
      target: `member_invitation:${invited.body.invitation_id}`,
      changes: { email: { to: email }, role: { to: 'viewer' } },
    })
    expect(joined).toEqual({
      actor: `user:${newcomer.id}`,
      action: 'member.joined',
      target: `member:${newcomer.id}`,
      changes: { role: { to: 'viewer' }, invitation: { from: invited.body.invitation_id } },
    })
  })

  it('refuses the link to another account, and keeps it for the invited one', async () => {
    const owner = await person('Owner')
    const ws = await workspaceOf(owner)
    const email = `carol-${crypto.randomUUID()}@example.com`
    expect((await api(owner, 'POST', members(ws), { email, role: 'developer' })).status).toBe(201)
    const link = await invitationLink(email)

    const dave = await person('Dave')
    const page = await openPage(link, dave)
    expect(page.status).toBe(403)
    expect(page.html).toContain('This invitation is for another address')
    expect(page.html).not.toContain('Accept invitation')
    const refused = await acceptAs(dave, link)
    expect(refused.status).toBe(403)
    expect((await api(dave, 'GET', `/v1/workspaces/${ws}`)).status).toBe(404)
    expect((await roles(owner, ws))[email]).toBe('invited:developer')

    const carol = await person('Carol', email)
    expect((await acceptAs(carol, link)).status).toBe(303)
    expect((await roles(owner, ws))[email]).toBe('active:developer')
    expect((await auditOf(ws)).map((r) => r.action)).toEqual(['member.invited', 'member.joined'])
  })

  it('refuses an expired link; the address can be invited again, a live invitation cannot (409)', async () => {
    const owner = await person('Owner')
    const ws = await workspaceOf(owner)
    const email = `late-${crypto.randomUUID()}@example.com`
    const first = await api(owner, 'POST', members(ws), { email, role: 'viewer' })
    const link = await invitationLink(email)
    const pending = await api(owner, 'POST', members(ws), { email, role: 'admin' })
    expect(pending.status).toBe(409)
    expect(pending.body.detail).toContain('pending invitation')

    // The invitee's session outlives the link: signed up a little later.
    clock.advance(10 * MINUTE)
    const late = await person('Late', email)
    clock.set(Date.parse(first.body.expires_at))
    const admin = await signedIn(owner)
    const page = await openPage(link, late)
    expect(page.status).toBe(410)
    expect(page.html).toContain('This invitation has expired')
    expect((await acceptAs(late, link)).status).toBe(410)
    expect((await api(late, 'GET', `/v1/workspaces/${ws}`)).status).toBe(404)
    // Still listed, until cancelled or sent again.
    const listed = await api(admin, 'GET', members(ws))
    expect(listed.body.items[1]).toMatchObject({
      email,
      status: 'invited',
      expires_at: first.body.expires_at,
    })

    // The account exists now: adding the address again makes it a member at once.
    const again = await api(admin, 'POST', members(ws), { email, role: 'viewer' })
    expect(again.status).toBe(201)
    expect(again.body.status).toBe('active')
    expect((await api(admin, 'GET', members(ws))).body.total).toBe(2)
    expect((await acceptAs(late, link)).status).toBe(404)
  })

  it('sends an expired invitation again with a new link; a cancelled link opens nothing', async () => {
    const owner = await person('Owner')
    const ws = await workspaceOf(owner)
    const email = `again-${crypto.randomUUID()}@example.com`
    const first = await api(owner, 'POST', members(ws), { email, role: 'viewer' })
    const oldLink = await invitationLink(email)
    smtp.messages.length = 0

    clock.advance(7 * DAY + MINUTE)
    const admin = await signedIn(owner)
    const second = await api(admin, 'POST', members(ws), { email, role: 'developer' })
    expect(second.status).toBe(201)
    expect(second.body.invitation_id).not.toBe(first.body.invitation_id)
    const newLink = await invitationLink(email)
    expect(newLink).not.toBe(oldLink)
    expect((await openPage(oldLink)).status).toBe(404)
    expect((await api(admin, 'GET', members(ws))).body.items.map((m: Json) => m.role)).toEqual([
      'owner',
      'developer',
    ])

    const cancelled = await api(admin, 'DELETE', `${members(ws)}/invitations/${second.body.invitation_id}`)
    expect(cancelled).toEqual({ status: 200, body: { deleted: true } })
    expect(await api(admin, 'DELETE', `${members(ws)}/invitations/${second.body.invitation_id}`)).toEqual({
      status: 200,
      body: { deleted: true },
    })
    expect((await openPage(newLink)).status).toBe(404)
    expect((await api(admin, 'GET', members(ws))).body.total).toBe(1)
    expect((await auditOf(ws)).map((r) => [r.action, r.target])).toEqual([
      ['member.invited', `member_invitation:${first.body.invitation_id}`],
      ['member.invited', `member_invitation:${second.body.invitation_id}`],
      ['member.invitation_cancelled', `member_invitation:${second.body.invitation_id}`],
    ])
  })
})

describe('roles and owners', () => {
  it('keeps the last owner (409), and moves the organisation when its owner steps down', async () => {
    const first = await person('First')
    const second = await person('Second')
    const ws = await workspaceOf(first)

    const demote = await api(first, 'PATCH', `${members(ws)}/${first.id}`, { role: 'admin' })
    expect(demote.status).toBe(409)
    expect(demote.body).toEqual({ detail: 'A workspace needs an owner: make someone else an owner first' })
    expect((await api(first, 'DELETE', `${members(ws)}/${first.id}`)).status).toBe(409)

    expect((await api(first, 'POST', members(ws), { email: second.email, role: 'owner' })).status).toBe(201)
    const stepped = await api(first, 'PATCH', `${members(ws)}/${first.id}`, { role: 'admin' })
    expect(stepped.status).toBe(200)
    expect(stepped.body).toMatchObject({ account_id: first.id, role: 'admin', status: 'active' })
    const [row] = await server.core.db.select().from(workspaces).where(eq(workspaces.id, ws))
    expect(row!.ownerId).toBe(second.id)
    // The same role again changes nothing, and writes nothing.
    expect((await api(second, 'PATCH', `${members(ws)}/${first.id}`, { role: 'admin' })).status).toBe(200)

    expect((await api(second, 'DELETE', `${members(ws)}/${second.id}`)).status).toBe(409)
    expect(await api(second, 'DELETE', `${members(ws)}/${first.id}`)).toEqual({
      status: 200,
      body: { deleted: true },
    })
    expect(await api(second, 'DELETE', `${members(ws)}/${first.id}`)).toEqual({
      status: 200,
      body: { deleted: true },
    })
    expect((await api(second, 'PATCH', `${members(ws)}/${first.id}`, { role: 'viewer' })).status).toBe(404)

    expect((await auditOf(ws)).slice(1)).toEqual([
      {
        actor: `user:${first.id}`,
        action: 'member.role_changed',
        target: `member:${first.id}`,
        changes: { role: { from: 'owner', to: 'admin' } },
      },
      {
        actor: `user:${second.id}`,
        action: 'member.removed',
        target: `member:${first.id}`,
        changes: { role: { from: 'admin' } },
      },
    ])
  })

  it('lets exactly one of two last owners step down when both try at once', async () => {
    for (let round = 0; round < 3; round++) {
      const a = await person('A')
      const b = await person('B')
      const ws = await workspaceOf(a, [[b, 'owner']])
      // Each demotes themselves, then (a fresh pair) each the other: never both.
      const selves = await Promise.all([
        api(a, 'PATCH', `${members(ws)}/${a.id}`, { role: 'admin' }),
        api(b, 'PATCH', `${members(ws)}/${b.id}`, { role: 'admin' }),
      ])
      expect(selves.map((r) => r.status).sort()).toEqual([200, 409])
      const owners = Object.values(await roles(a, ws)).filter((r) => r === 'active:owner')
      expect(owners).toHaveLength(1)

      const c = await person('C')
      const d = await person('D')
      const other = await workspaceOf(c, [[d, 'owner']])
      const crossed = await Promise.all([
        api(c, 'PATCH', `${members(other)}/${d.id}`, { role: 'developer' }),
        api(d, 'PATCH', `${members(other)}/${c.id}`, { role: 'developer' }),
      ])
      // The second to run is no owner any more by then (403), or would leave none (409).
      expect(crossed.filter((r) => r.status === 200)).toHaveLength(1)
      expect(Object.values(await roles(c, other)).filter((r) => r === 'active:owner')).toHaveLength(1)
    }
  })

  it('lets only an owner grant, change or remove the owner role; admins manage the others', async () => {
    const owner = await person('Owner')
    const admin = await person('Admin')
    const dev = await person('Dev')
    const viewer = await person('Viewer')
    const ws = await workspaceOf(owner, [
      [admin, 'admin'],
      [dev, 'developer'],
    ])
    const ownerOnly = { detail: 'Only an owner can grant, change or remove the owner role' }

    // An admin manages the other roles.
    expect((await api(admin, 'POST', members(ws), { email: viewer.email, role: 'viewer' })).status).toBe(201)
    expect((await api(admin, 'PATCH', `${members(ws)}/${viewer.id}`, { role: 'admin' })).status).toBe(200)
    expect((await api(admin, 'PATCH', `${members(ws)}/${viewer.id}`, { role: 'viewer' })).status).toBe(200)
    // Never the owner role.
    const outsider = `outsider-${crypto.randomUUID()}@example.com`
    expect(await api(admin, 'POST', members(ws), { email: outsider, role: 'owner' })).toEqual({
      status: 403,
      body: ownerOnly,
    })
    expect(await api(admin, 'PATCH', `${members(ws)}/${dev.id}`, { role: 'owner' })).toEqual({
      status: 403,
      body: ownerOnly,
    })
    expect(await api(admin, 'PATCH', `${members(ws)}/${admin.id}`, { role: 'owner' })).toEqual({
      status: 403,
      body: ownerOnly,
    })
    expect((await api(admin, 'PATCH', `${members(ws)}/${owner.id}`, { role: 'viewer' })).status).toBe(403)
    expect((await api(admin, 'DELETE', `${members(ws)}/${owner.id}`)).status).toBe(403)
    // Developers and viewers read the list and change nothing.
    expect((await api(viewer, 'GET', members(ws))).status).toBe(200)
    for (const who of [dev, viewer]) {
      const refused = await api(who, 'DELETE', `${members(ws)}/${admin.id}`)
      expect(refused).toEqual({
        status: 403,
        body: { detail: 'This action needs the workspace:admin scope' },
      })
    }
    // An owner may do all of it.
    expect((await api(owner, 'PATCH', `${members(ws)}/${dev.id}`, { role: 'owner' })).status).toBe(200)
    expect((await api(owner, 'PATCH', `${members(ws)}/${dev.id}`, { role: 'developer' })).status).toBe(200)
    expect((await api(admin, 'DELETE', `${members(ws)}/${dev.id}`)).status).toBe(200)
    expect(await roles(owner, ws)).toEqual({
      [owner.email]: 'active:owner',
      [admin.email]: 'active:admin',
      [viewer.email]: 'active:viewer',
    })
    const actions = (await auditOf(ws)).map(
      (r) => `${r.actor === `user:${admin.id}` ? 'admin' : 'owner'} ${r.action}`,
    )
    expect(actions).toEqual([
      'owner member.added',
      'owner member.added',
      'admin member.added',
      'admin member.role_changed',
      'admin member.role_changed',
      'owner member.role_changed',
      'owner member.role_changed',
      'admin member.removed',
    ])
  })

  it("acts on a member's very next request, by session and by bearer token alike", async () => {
    const owner = await person('Owner')
    const ws = await workspaceOf(owner)
    const email = `eve-${crypto.randomUUID()}@example.com`
    const eve = await signUpUser(
      server,
      { email, password: 'an admin password', name: 'Eve' },
      { bearer: true },
    )
    await verifyPlatformEmail(server, email)
    expect((await api(owner, 'POST', members(ws), { email, role: 'admin' })).status).toBe(201)
    const bearer = { bearer: eve.bearer! }
    /** With the dashboard session of Eve's browser. */
    const session = (method: string, path: string, body?: unknown) =>
      eve.agent.request(path, {
        method,
        headers: {
          accept: 'application/json',
          'x-csrf-token': eve.csrf,
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        body: body ? JSON.stringify(body) : undefined,
      })
    const rename = { name: 'Renamed' }
    expect((await session('PATCH', `/v1/workspaces/${ws}`, rename)).status).toBe(200)
    expect((await api(bearer, 'PATCH', `/v1/workspaces/${ws}`, rename)).status).toBe(200)

    expect((await api(owner, 'PATCH', `${members(ws)}/${eve.id}`, { role: 'viewer' })).status).toBe(200)
    expect((await session('PATCH', `/v1/workspaces/${ws}`, rename)).status).toBe(403)
    expect((await api(bearer, 'PATCH', `/v1/workspaces/${ws}`, rename)).status).toBe(403)
    expect((await session('GET', `/v1/workspaces/${ws}`)).status).toBe(200)
    expect((await api(bearer, 'GET', `/v1/workspaces/${ws}`)).status).toBe(200)

    expect((await api(owner, 'DELETE', `${members(ws)}/${eve.id}`)).status).toBe(200)
    expect((await session('GET', `/v1/workspaces/${ws}`)).status).toBe(404)
    expect((await api(bearer, 'GET', `/v1/workspaces/${ws}`)).status).toBe(404)
    expect((await api(bearer, 'GET', '/v1/workspaces')).body.items).toEqual([])
  })
})
