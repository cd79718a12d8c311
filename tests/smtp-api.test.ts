import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { eq } from 'drizzle-orm'
import type { ParsedMail } from 'mailparser'
import { workspaces } from '../src/features/workspaces/schema'
import { accounts } from '../src/identity'
import { jobs } from '../src/queue/schema'
import { ManualClock } from '../src/shared/clock'
import { type Caller, callApi, keyCaller, type Person, person } from './support/callers'
import { TEST_ACTOR } from './support/core'
import { activeWorkspace } from './support/instances'
import { freePort, startTestServer, type TestServer } from './support/server'
import { type SmtpSink, startSmtpServer } from './support/smtp'
import type { Json } from './support/users'

// SPEC "SMTP and branding" (the SMTP rules) and DESIGN "SMTP": a workspace's own mail server, with
// two real SMTP servers (A and B) and a third as the platform's own (SMTP_URL).
const clock = new ManualClock(Date.now())
let server: TestServer
let a: SmtpSink
let b: SmtpSink
let platform: SmtpSink

/** Low, so a test reaches it; each test has its own workspace, and the clock stands still. */
const WORKSPACE_PER_MINUTE = 20
const B_PASSWORD = 'b-pass-s3cret-7'
const A_PASSWORD = 'a-pass-s3cret-1'
const WRONG_PASSWORD = 'wrong-pass-s3cret-9'

beforeAll(async () => {
  ;[a, b, platform] = await Promise.all([
    startSmtpServer(),
    startSmtpServer({ password: B_PASSWORD }),
    startSmtpServer(),
  ])
  server = await startTestServer(
    {
      SMTP_URL: platform.url,
      SMTP_FROM: 'Gatehouse Platform <platform@gatehouse.test>',
      // A and B listen on loopback.
      SMTP_ALLOW_PRIVATE: 'true',
      RATE_LIMIT_WORKSPACE_PER_MINUTE: String(WORKSPACE_PER_MINUTE),
    },
    undefined,
    { clock },
  )
})
afterAll(async () => {
  await server.stop()
  await Promise.all([a, b, platform].map((s) => s.close()))
})

const api = (who: Caller, method: string, path: string, body?: unknown) =>
  callApi(server.baseUrl, who, method, path, body)
const smtpOf = (ws: string) => `/v1/workspaces/${ws}/smtp`

const serverA = () => ({
  host: '127.0.0.1',
  port: a.port,
  security: 'none',
  username: 'mailer-a',
  password: A_PASSWORD,
  from_address: 'a@acme.test',
  from_name: 'Acme via A',
})
const serverB = (password = B_PASSWORD) => ({
  host: '127.0.0.1',
  port: b.port,
  security: 'none',
  username: 'mailer-b',
  password,
  from_address: 'auth@acme.test',
  from_name: 'Acme',
})

async function workspaceWithOwner(): Promise<{ owner: Person; ws: string }> {
  const owner = await person(server.core)
  return { owner, ws: await activeWorkspace(server.core, owner.id) }
}

/** A person's platform address; `verified` marks it proved first. */
async function addressOf(who: Person, { verified = false } = {}): Promise<string> {
  if (verified)
    await server.core.db.update(accounts).set({ emailVerified: true }).where(eq(accounts.id, who.id))
  const [row] = await server.core.db.select().from(accounts).where(eq(accounts.id, who.id))
  return row!.email
}

/** Whether any mail the sink received went to `address`. */
const received = (sink: SmtpSink, address: string) =>
  sink.messages.some((m) => JSON.stringify(m.to).includes(address))

const rowsOf = (ws: string) =>
  server.core.store.query<Record<string, unknown>>('SELECT * FROM smtp_providers WHERE workspace_id = $1', [
    ws,
  ])

/** Invites a new user through the API and runs the mail job; answers where the invitation arrived. */
async function inviteArrivesAt(owner: Person, ws: string, sink: SmtpSink): Promise<ParsedMail> {
  const email = `invited-${crypto.randomUUID()}@example.com`
  const invited = await api(owner, 'POST', `/v1/workspaces/${ws}/users/invite`, { email })
  expect(invited.status).toBe(201)
  await server.tick()
  const mail = await sink.waitFor((m) => JSON.stringify(m.to).includes(email))
  for (const other of [a, b, platform].filter((s) => s !== sink))
    expect(other.messages.some((m) => JSON.stringify(m.to).includes(email))).toBe(false)
  return mail
}

/** Nothing the server keeps or writes holds any of these passwords. */
async function expectNoPasswordAnywhere(ws: string, owner: Person) {
  const audit = await api(owner, 'GET', `/v1/workspaces/${ws}/audit-log`)
  const jobRows = await server.core.db.select().from(jobs).where(eq(jobs.workspaceId, ws))
  const kept = JSON.stringify([audit.body, jobRows, await rowsOf(ws), server.logLines])
  for (const password of [A_PASSWORD, B_PASSWORD, WRONG_PASSWORD]) expect(kept).not.toContain(password)
}

const platformView = {
  provider: 'platform',
  host: null,
  port: null,
  username: null,
  security: null,
  from_address: 'platform@gatehouse.test',
  from_name: 'Gatehouse Platform',
  has_password: false,
}

describe("a workspace's SMTP server", () => {
  it('PUT A then PUT B leaves one custom provider, B, active; mail goes through B from its sender; DELETE brings the platform back', async () => {
    const { owner, ws } = await workspaceWithOwner()
    expect(await api(owner, 'GET', smtpOf(ws))).toMatchObject({ status: 200, body: platformView })

    const putA = await api(owner, 'PUT', smtpOf(ws), serverA())
    expect(putA.status).toBe(200)
    const putB = await api(owner, 'PUT', smtpOf(ws), serverB())
    expect(putB).toMatchObject({
      status: 200,
      body: {
        provider: 'custom',
        host: '127.0.0.1',
        port: b.port,
        username: 'mailer-b',
        security: 'none',
        from_address: 'auth@acme.test',
        from_name: 'Acme',
        has_password: true,
      },
    })
    expect(Object.keys(putB.body).sort()).toEqual(Object.keys(platformView).sort())
    expect((await api(owner, 'GET', smtpOf(ws))).body).toEqual(putB.body)
    const rows = await rowsOf(ws)
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ port: b.port, from_address: 'auth@acme.test' })
    expect(Boolean(rows[0]!.active)).toBe(true)

    const mail = await inviteArrivesAt(owner, ws, b)
    expect(mail.from?.value).toEqual([{ address: 'auth@acme.test', name: 'Acme' }])
    expect(b.logins).toContainEqual({ username: 'mailer-b', password: B_PASSWORD })
    const [provider] = await rowsOf(ws)
    expect(provider!.last_success_at).not.toBeNull()

    const reverted = await api(owner, 'DELETE', smtpOf(ws))
    expect(reverted).toMatchObject({ status: 200, body: platformView })
    expect(await rowsOf(ws)).toHaveLength(0)
    const viaPlatform = await inviteArrivesAt(owner, ws, platform)
    expect(viaPlatform.from?.value).toEqual([
      { address: 'platform@gatehouse.test', name: 'Gatehouse Platform' },
    ])

    const audit = await api(owner, 'GET', `/v1/workspaces/${ws}/audit-log`)
    const actions = audit.body.items.map((e: Json) => e.action)
    expect(actions.filter((x: string) => x === 'smtp.updated')).toHaveLength(2)
    expect(actions).toContain('smtp.reverted')
    const updated = audit.body.items.find((e: Json) => e.action === 'smtp.updated')
    expect(updated.changes.port).toEqual({ from: a.port, to: b.port })
    await expectNoPasswordAnywhere(ws, owner)
  })

  it('keeps the password when the same account on the same server is saved without one, and drops it for another account', async () => {
    const { owner, ws } = await workspaceWithOwner()
    await api(owner, 'PUT', smtpOf(ws), serverB())
    const { password: _, ...withoutPassword } = serverB()
    const kept = await api(owner, 'PUT', smtpOf(ws), { ...withoutPassword, from_name: 'Acme Inc' })
    expect(kept.body).toMatchObject({ has_password: true, from_name: 'Acme Inc' })
    const mail = await inviteArrivesAt(owner, ws, b)
    expect(mail.from?.value).toEqual([{ address: 'auth@acme.test', name: 'Acme Inc' }])
    const other = await api(owner, 'PUT', smtpOf(ws), { ...withoutPassword, username: 'someone-else' })
    expect(other.body.has_password).toBe(false)
  })

  it('refuses what it cannot use with 422 at the field', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const bad: [Record<string, unknown>, string][] = [
      [{ ...serverB(), host: '' }, 'host'],
      [{ ...serverB(), host: 'smtp.example.com/x' }, 'host'],
      [{ ...serverB(), port: 0 }, 'port'],
      [{ ...serverB(), port: 70000 }, 'port'],
      [{ ...serverB(), security: 'ssl3' }, 'security'],
      [{ ...serverB(), from_address: 'Acme <auth@acme.test>' }, 'from_address'],
      [{ ...serverB(), from_address: 'auth@acme.test\r\nBcc: x@evil.test' }, 'from_address'],
      [{ ...serverB(), from_name: 'Acme\r\nBcc: x@evil.test' }, 'from_name'],
      [{ ...serverB(), username: 'a\nb' }, 'username'],
    ]
    for (const [body, field] of bad) {
      const res = await api(owner, 'PUT', smtpOf(ws), body)
      expect([field, res.status]).toEqual([field, 422])
      expect(res.body.detail[0].loc.slice(0, 2)).toEqual(['body', field])
    }
    expect((await api(owner, 'GET', smtpOf(ws))).body.provider).toBe('platform')
  })

  it('lets a viewer read, and only workspace:admin change or test it', async () => {
    const { owner, ws } = await workspaceWithOwner()
    await api(owner, 'PUT', smtpOf(ws), serverB())
    const viewer = await person(server.core, { ws, role: 'viewer' })
    const developer = await person(server.core, { ws, role: 'developer' })
    expect((await api(viewer, 'GET', smtpOf(ws))).body.host).toBe('127.0.0.1')
    for (const [method, path, body] of [
      ['PUT', smtpOf(ws), serverA()],
      ['DELETE', smtpOf(ws), undefined],
      ['POST', `${smtpOf(ws)}/test`, { to: 'x@example.com' }],
    ] as const)
      expect((await api(developer, method, path, body)).status).toBe(403)
  })
})

describe('a change stopped midway', () => {
  type Step = 'list' | 'create' | 'activate' | 'delete'
  /** The workspace's service with a step that fails, as a crash or a lost database would. */
  async function failingAt(step: Step) {
    const { createSmtpService } = await import('../src/features/smtp/service')
    return createSmtpService(server.core, {
      beforeStep: (s) => {
        if (s === step) throw new Error(`injected failure before ${s}`)
      },
    })
  }
  const workspaceRow = async (ws: string) =>
    (await server.core.db.select().from(workspaces).where(eq(workspaces.id, ws)))[0]!

  for (const [step, inEffect] of [
    ['list', 'a'],
    ['create', 'a'],
    ['activate', 'a'],
    ['delete', 'b'],
  ] as const) {
    it(`a PUT failing at its "${step}" step leaves ${inEffect === 'a' ? 'the previous' : 'the new'} provider working; the next PUT cleans up`, async () => {
      const { owner, ws } = await workspaceWithOwner()
      expect((await api(owner, 'PUT', smtpOf(ws), serverA())).status).toBe(200)
      const service = await failingAt(step)
      await expect(service.replace(await workspaceRow(ws), TEST_ACTOR, serverB() as never)).rejects.toThrow(
        `injected failure before ${step}`,
      )
      const sink = inEffect === 'a' ? a : b
      expect((await api(owner, 'GET', smtpOf(ws))).body.port).toBe(sink.port)
      expect((await rowsOf(ws)).filter((r) => Boolean(r.active))).toHaveLength(1)
      await inviteArrivesAt(owner, ws, sink)
      // The next change deletes whatever the stopped one left.
      expect((await api(owner, 'PUT', smtpOf(ws), serverB())).status).toBe(200)
      expect(await rowsOf(ws)).toHaveLength(1)
      await inviteArrivesAt(owner, ws, b)
    })
  }

  for (const [step, inEffect] of [
    ['activate', 'b'],
    ['delete', 'platform'],
  ] as const) {
    it(`a DELETE failing at its "${step}" step leaves ${inEffect === 'b' ? 'the custom' : 'the platform'} server working; the next DELETE cleans up`, async () => {
      const { owner, ws } = await workspaceWithOwner()
      expect((await api(owner, 'PUT', smtpOf(ws), serverB())).status).toBe(200)
      const service = await failingAt(step)
      await expect(service.revert(await workspaceRow(ws), TEST_ACTOR)).rejects.toThrow('injected failure')
      expect((await api(owner, 'GET', smtpOf(ws))).body.provider).toBe(
        inEffect === 'b' ? 'custom' : 'platform',
      )
      await inviteArrivesAt(owner, ws, inEffect === 'b' ? b : platform)
      expect((await api(owner, 'DELETE', smtpOf(ws))).status).toBe(200)
      expect(await rowsOf(ws)).toHaveLength(0)
    })
  }
})

describe('POST …/smtp/test', () => {
  const test = (who: Caller, ws: string, to = 'tester@example.com') =>
    api(who, 'POST', `${smtpOf(ws)}/test`, { to })

  it("sends through the server in effect now and answers the server's reply", async () => {
    const { owner, ws } = await workspaceWithOwner()
    const own = await addressOf(owner, { verified: true })
    const viaPlatform = await test(owner, ws, own)
    expect(viaPlatform.body).toMatchObject({ ok: true, provider: 'platform', error: null })
    expect(viaPlatform.body.response).toMatch(/^250 /)
    const platformMail = await platform.waitFor((m) => JSON.stringify(m.to).includes(own))
    expect(platformMail.from?.value).toEqual([
      { address: 'platform@gatehouse.test', name: 'Gatehouse Platform' },
    ])

    await api(owner, 'PUT', smtpOf(ws), serverB())
    const viaB = await test(owner, ws, 'b-test@example.com')
    expect(viaB.status).toBe(200)
    expect(viaB.body).toMatchObject({ ok: true, provider: 'custom', error: null })
    expect(viaB.body.response).toMatch(/^250 /)
    const mail = await b.waitFor((m) => JSON.stringify(m.to).includes('b-test@example.com'))
    expect(mail.subject).toBe('Test mail from Acme')
    expect(mail.html).toContain('<p>This is a test mail')
    expect(mail.text).toContain('This is a test mail')
  })

  it("through the platform's server, goes only to the caller's own verified address: any other, an unverified one or a machine key's call is a 422 at body.to and nothing is sent", async () => {
    const { owner, ws } = await workspaceWithOwner()
    const own = await addressOf(owner)
    const victim = `victim-${crypto.randomUUID()}@example.com`
    const key = await keyCaller(server.core, ws, ['workspace:admin'])
    const refusedTo = async (who: Caller, to: string, message: RegExp) => {
      const res = await test(who, ws, to)
      expect({ to, status: res.status }).toEqual({ to, status: 422 })
      expect(res.body.detail[0].loc).toEqual(['body', 'to'])
      expect(res.body.detail[0].msg).toMatch(message)
    }
    await refusedTo(owner, victim, /only to your own verified address/)
    await refusedTo(owner, own, /Verify your address first/)
    await refusedTo(key, victim, /a machine key has none/)
    await addressOf(owner, { verified: true })
    await refusedTo(owner, victim, /only to your own verified address/)
    await refusedTo(key, own, /a machine key has none/)

    // The caller's own address, however it is typed, is where it goes.
    const mine = await test(owner, ws, own.toUpperCase())
    expect(mine.body).toMatchObject({ ok: true, provider: 'platform', error: null })
    await platform.waitFor((m) => JSON.stringify(m.to).includes(own))
    expect(received(platform, victim)).toBe(false)
  })

  it("through the workspace's own server, goes to any address, for a person or a machine key", async () => {
    const { owner, ws } = await workspaceWithOwner()
    await api(owner, 'PUT', smtpOf(ws), serverB())
    const key = await keyCaller(server.core, ws, ['workspace:admin'])
    for (const [who, to] of [
      [owner, `anyone-${crypto.randomUUID()}@example.com`],
      [key, `someone-${crypto.randomUUID()}@example.com`],
    ] as const) {
      const res = await test(who, ws, to)
      expect(res.body).toMatchObject({ ok: true, provider: 'custom', error: null })
      await b.waitFor((m) => JSON.stringify(m.to).includes(to))
      expect(received(platform, to)).toBe(false)
    }
  })

  it("counts against the workspace's control-plane limit like any write: a 429 once it is used up", async () => {
    const { owner, ws } = await workspaceWithOwner()
    const own = await addressOf(owner, { verified: true })
    for (let i = 0; i < WORKSPACE_PER_MINUTE; i++) {
      const res = await test(owner, ws, own)
      expect([i, res.status]).toEqual([i, 200])
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(WORKSPACE_PER_MINUTE - 1 - i))
    }
    const refused = await test(owner, ws, own)
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).not.toBeNull()
  })

  it('says the server refused the password, records it on the provider, and a queued mail fails the same way without the password anywhere', async () => {
    const { owner, ws } = await workspaceWithOwner()
    await api(owner, 'PUT', smtpOf(ws), serverB(WRONG_PASSWORD))
    const res = await test(owner, ws)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ ok: false, provider: 'custom', response: null, error: { type: 'auth' } })
    expect(res.body.error.message).toContain(`127.0.0.1:${b.port} refused the username or password`)

    const email = `never-${crypto.randomUUID()}@example.com`
    expect((await api(owner, 'POST', `/v1/workspaces/${ws}/users/invite`, { email })).status).toBe(201)
    await server.tick()
    const [job] = await server.core.db.select().from(jobs).where(eq(jobs.workspaceId, ws))
    expect(job).toMatchObject({ kind: 'mail.send', status: 'queued', attempts: 1 })
    expect(job!.lastError).toContain('refused the username or password')
    const [row] = await rowsOf(ws)
    expect(String(row!.last_error)).toContain('refused the username or password')
    expect(row!.last_error_at).not.toBeNull()
    await expectNoPasswordAnywhere(ws, owner)
    expect(JSON.stringify(res.body)).not.toContain(WRONG_PASSWORD)
  })

  it('says the connection was refused', async () => {
    const { owner, ws } = await workspaceWithOwner()
    await api(owner, 'PUT', smtpOf(ws), { ...serverA(), port: await freePort() })
    const res = await test(owner, ws)
    expect(res.body).toMatchObject({ ok: false, error: { type: 'refused' } })
    expect(res.body.error.message).toContain('refused the connection')
  })

  it('refuses an address that is not one', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const res = await test(owner, ws, 'not an address')
    expect(res.status).toBe(422)
    expect(res.body.detail[0].loc).toEqual(['body', 'to'])
  })
})

describe('without SMTP_ALLOW_PRIVATE', () => {
  /** The same server's service and store, under the default policy (private addresses refused). */
  const guarded = async () => {
    const { createSmtpService } = await import('../src/features/smtp/service')
    const core = { ...server.core, config: { ...server.core.config, smtp: { allowPrivate: false } } }
    return createSmtpService(core)
  }

  it('refuses private, loopback, link-local and metadata hosts with 422', async () => {
    const { ws } = await workspaceWithOwner()
    const w = (await server.core.db.select().from(workspaces).where(eq(workspaces.id, ws)))[0]!
    const service = await guarded()
    for (const host of [
      '127.0.0.1',
      'localhost',
      '10.1.2.3',
      '169.254.169.254',
      '0x7f.1',
      '[::1]',
      'mail.localhost',
    ])
      await expect(service.replace(w, TEST_ACTOR, { ...serverB(), host } as never)).rejects.toMatchObject({
        status: 422,
        code: 'HOST_REFUSED',
        loc: ['body', 'host'],
      })
  })

  it('does not connect to a stored private address: the test answers "blocked"', async () => {
    const { owner, ws } = await workspaceWithOwner()
    await api(owner, 'PUT', smtpOf(ws), serverB())
    const w = (await server.core.db.select().from(workspaces).where(eq(workspaces.id, ws)))[0]!
    const before = b.messages.length
    const res = await (await guarded()).test(w, null, 'blocked@example.com')
    expect(res).toMatchObject({ ok: false, error: { type: 'blocked' } })
    expect(res.error?.message).toContain('private, loopback')
    expect(b.messages.length).toBe(before)
  })
})
