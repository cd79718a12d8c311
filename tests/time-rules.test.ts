import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import { decodeJwt } from 'jose'
import type { ParsedMail } from 'mailparser'
import { PURGE_EXPIRED } from '../src/jobs/purge-expired'
import { isoTime, ManualClock } from '../src/shared/clock'
import { failProvisioning, PROVISIONING_CONTROL } from './fixtures/provisioning-control'
import { Agent } from './support/browserless'
import { startTestServer, type TestServer } from './support/server'
import { type SmtpSink, startSmtpServer } from './support/smtp'
import { json, signUpUser } from './support/users'

// Every rule that runs on time, driven by the server's ManualClock: the test turns it, then
// `tick()` does what the timers would. Each test starts the clock at the real time, because
// oidc-provider, which signs the tokens a sign-in needs, reads Date.now.
const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

const clock = new ManualClock(Date.now())
let smtp: SmtpSink
let server: TestServer

beforeAll(async () => {
  smtp = await startSmtpServer()
  server = await startTestServer({ SMTP_URL: smtp.url }, undefined, {
    clock,
    handlerModules: [PROVISIONING_CONTROL],
  })
})
afterAll(async () => {
  await server.stop()
  await smtp.close()
})
beforeEach(() => clock.set(Date.now()))

/** Raw SQL on the server's store (`$1…$n`, valid on SQLite and PostgreSQL). */
const sql = (query: string, ...params: unknown[]) => server.core.store.query(query, params)

/** A new platform user (a dashboard session in `agent`), signed up at the clock's current time. */
async function newUser(opts: { bearer?: boolean } = {}) {
  const email = `user-${crypto.randomUUID()}@example.com`
  const user = await signUpUser(server, { email, password: 'a user password', name: 'A User' }, opts)
  return { ...user, email }
}

const mailsTo = (address: string, subject: string) =>
  smtp.messages.filter(
    (m) =>
      m.subject === subject && [m.to ?? []].flat().some((a) => a.value.some((v) => v.address === address)),
  )
const linkIn = (mail: ParsedMail) => mail.text?.match(/https?:\/\/\S+/)?.[0] ?? ''

/** The link of the mail `subject` to `address`, once it was sent. */
async function mailedLink(address: string, subject: string): Promise<string> {
  await server.tick()
  const [mail] = mailsTo(address, subject)
  expect(mail).toBeDefined()
  return linkIn(mail!)
}

/** "Forgot password" on the platform's hosted page for `email`. */
async function forgotPassword(email: string) {
  const agent = new Agent(server.baseUrl)
  const page = await agent.follow('/i/platform/forgot-password')
  const sent = await agent.submit(await page.res.text(), page.url, '/forgot-password', { email })
  expect(sent.res.status).toBe(200)
  await server.tick()
}

/** Opens a reset link and sets a new password with it; the page that answers. */
async function resetWith(link: string) {
  const agent = new Agent(server.baseUrl)
  const page = await agent.follow(link)
  const done = await agent.submit(await page.res.text(), page.url, '/reset-password', {
    password: 'a brand new password',
  })
  return { status: done.res.status, html: await done.res.text() }
}

describe('mailed links', () => {
  it('verify an email address for 24 hours, then say the link expired', async () => {
    const [early, late] = [await newUser(), await newUser()]
    const earlyLink = await mailedLink(early.email, 'Verify your email address')
    const lateLink = await mailedLink(late.email, 'Verify your email address')

    clock.advance(DAY - 1)
    const verified = await fetch(earlyLink)
    expect(verified.status).toBe(200)
    expect(await verified.text()).toContain('Email verified')

    clock.advance(1)
    const expired = await fetch(lateLink)
    expect(expired.status).toBe(400)
    expect(await expired.text()).toContain('<h1>Link expired</h1>')
    // Read raw: SQLite stores the flag as 0/1, PostgreSQL as a boolean.
    const verifiedRows = await sql('SELECT email_verified FROM accounts WHERE id = $1', late.id)
    expect(verifiedRows.map((r) => ({ email_verified: Boolean(r.email_verified) }))).toEqual([
      { email_verified: false },
    ])
  })

  it('reset a password for 1 hour, then say the link expired', async () => {
    const [early, late] = [await newUser(), await newUser()]
    await forgotPassword(early.email)
    await forgotPassword(late.email)
    const earlyLink = await mailedLink(early.email, 'Reset your password')
    const lateLink = await mailedLink(late.email, 'Reset your password')

    clock.advance(HOUR - 1)
    const changed = await resetWith(earlyLink)
    expect(changed.status).toBe(200)
    expect(changed.html).toContain('Password changed')

    clock.advance(1)
    const expired = await resetWith(lateLink)
    expect(expired.status).toBe(400)
    expect(expired.html).toContain('<h1>Link expired</h1>')
  })

  it('are mailed for a password reset at most 3 times in 15 minutes per address', async () => {
    const user = await newUser()
    const resets = () => mailsTo(user.email, 'Reset your password').length
    for (let i = 0; i < 4; i++) await forgotPassword(user.email)
    expect(resets()).toBe(3)

    clock.advance(15 * MINUTE)
    await forgotPassword(user.email)
    expect(resets()).toBe(3)

    clock.advance(1)
    await forgotPassword(user.email)
    expect(resets()).toBe(4)
  })
})

describe('dashboard sign-in', () => {
  it('keeps a dashboard session for 7 days', async () => {
    const user = await newUser()
    const me = async () => (await user.agent.request('/v1/auth/me')).status
    expect(await me()).toBe(200)
    clock.advance(7 * DAY - 1)
    expect(await me()).toBe(200)
    clock.advance(1)
    expect(await me()).toBe(401)
  })

  it('refuses a login finished more than 10 minutes after it started, even with a good code', async () => {
    const user = await newUser()
    // The agent still holds its platform instance session: the login comes straight back with a code.
    const reached = await user.agent.follow('/v1/auth/login', {}, (u) => u.pathname === '/v1/auth/callback')
    expect(reached.url.searchParams.get('code')).toBeTruthy()

    clock.advance(10 * MINUTE + 1)
    const res = await user.agent.request(reached.url)
    expect(res.status).toBe(400)
    expect(((await res.json()) as { detail: string }).detail).toContain('This sign-in attempt expired')
  })

  it('accepts a control-plane access token until its expiry (1 hour), not from then on', async () => {
    const user = await newUser({ bearer: true })
    const { iat, exp } = decodeJwt(user.bearer!)
    expect(exp! - iat!).toBe(3600)
    const list = async () =>
      (
        await fetch(`${server.baseUrl}/v1/workspaces`, {
          headers: { authorization: `Bearer ${user.bearer}` },
        })
      ).status
    clock.set(exp! * 1000 - 1)
    expect(await list()).toBe(200)
    clock.set(exp! * 1000)
    expect(await list()).toBe(401)
  })
})

describe('jobs', () => {
  it('retry a failed workspace provisioning 1 second, then 2 seconds after a failure', async () => {
    const owner = await newUser()
    failProvisioning('Flaky', 2)
    const created = await json(owner.agent, 'POST', '/v1/workspaces', { name: 'Flaky' })
    expect(created.status).toBe(201)
    const id = created.body.id as string
    const state = async () => (await json(owner.agent, 'GET', `/v1/workspaces/${id}`)).body.state
    /** Attempts made once the clock moved `ms` on and the due jobs ran. */
    const attemptsAfter = async (ms: number) => {
      clock.advance(ms)
      await server.tick()
      return (await sql('SELECT attempts FROM jobs WHERE workspace_id = $1', id))[0]!.attempts
    }

    expect(await attemptsAfter(0)).toBe(1)
    expect(await attemptsAfter(999)).toBe(1)
    expect(await attemptsAfter(1)).toBe(2)
    expect(await state()).toBe('provisioning')
    expect(await attemptsAfter(1999)).toBe(2)
    expect(await attemptsAfter(1)).toBe(3)
    expect(await state()).toBe('active')
  })

  it('purge what expired once every 5 minutes: a dashboard session at the first slot after its 7 days', async () => {
    const user = await newUser()
    const sessions = async () =>
      (await sql('SELECT CAST(count(*) AS INTEGER) AS n FROM sessions WHERE account_id = $1', user.id))[0]!.n
    const purges = async () =>
      (await sql('SELECT dedupe_key, status FROM jobs WHERE kind = $1 ORDER BY run_at', PURGE_EXPIRED)).map(
        (r) => ({
          slot: String(r.dedupe_key).slice(PURGE_EXPIRED.length + 1),
          status: r.status,
        }),
      )
    expect(await sessions()).toBe(1)

    clock.advance(7 * DAY)
    await server.tick()
    const slot = clock.now() - (clock.now() % (5 * MINUTE))
    expect((await purges()).at(-1)).toEqual({ slot: isoTime(slot), status: 'done' })
    expect(await sessions()).toBe(0)

    const ran = (await purges()).length
    clock.set(slot + 5 * MINUTE - 1)
    await server.tick()
    expect(await purges()).toHaveLength(ran)
    clock.set(slot + 5 * MINUTE)
    await server.tick()
    expect(await purges()).toHaveLength(ran + 1)
    expect((await purges()).at(-1)).toEqual({ slot: isoTime(slot + 5 * MINUTE), status: 'done' })
  })
})
