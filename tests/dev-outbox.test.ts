import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Agent } from './support/browserless'
import { startTestServer, type TestServer } from './support/server'
import { eventually, type PlatformUser, signUpUser } from './support/users'

// Test servers listen on 127.0.0.1 with a loopback BASE_URL and no SMTP: the dev outbox is on.
let server: TestServer
let admin: PlatformUser
let user: PlatformUser

beforeAll(async () => {
  server = await startTestServer()
  // The first platform account is the platform administrator.
  admin = await signUpUser(
    server,
    { email: 'root@example.com', password: 'root password 1', name: 'Root' },
    { bearer: true },
  )
  user = await signUpUser(server, { email: 'dev@example.com', password: 'dev password 1', name: 'Dev' })
})
afterAll(() => server.stop())

const VERIFY_LINK = /\/i\/platform\/verify-email\?token=/

interface OutboxMail {
  to: string
  subject: string
  text: string
}

describe('the dev outbox of a local install', () => {
  it("shows the platform administrator's session the verification mails, links included", async () => {
    const mails = await eventually('both verification mails in the outbox', async () => {
      const res = await admin.agent.request('/dev/outbox.json')
      expect(res.status).toBe(200)
      const body = (await res.json()) as OutboxMail[]
      return body.length >= 2 ? body : undefined
    })
    expect(mails.map((m) => m.to).sort()).toEqual(['dev@example.com', 'root@example.com'])
    for (const mail of mails) expect(mail.text).toMatch(VERIFY_LINK)
    const page = await admin.agent.request('/dev/outbox')
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('dev@example.com')
  })

  it('is 404 to a signed-in user who is not the administrator, even for their own mail', async () => {
    for (const path of ['/dev/outbox', '/dev/outbox.json']) {
      const res = await user.agent.request(path)
      expect(res.status).toBe(404)
      expect(await res.text()).not.toMatch(VERIFY_LINK)
    }
  })

  it("is 404 to the administrator's bearer token: it is a page for the dashboard session", async () => {
    const res = await fetch(`${server.baseUrl}/dev/outbox.json`, {
      headers: { authorization: `Bearer ${admin.bearer}` },
    })
    expect(res.status).toBe(404)
  })

  it('sends a signed-out browser to sign in, and answers 401 to a signed-out API call', async () => {
    const stranger = new Agent(server.baseUrl)
    const page = await stranger.request('/dev/outbox')
    expect(page.status).toBe(303)
    expect(page.headers.get('location')).toBe('/v1/auth/login?next=%2Fdev%2Foutbox')
    expect((await stranger.request('/dev/outbox.json')).status).toBe(401)
  })

  it('leaves no link in a log line or a job row once the mails are delivered', async () => {
    await eventually('the mail jobs to finish', async () => {
      const [open] = await server.core.store.query<{ n: number }>(
        `SELECT CAST(count(*) AS INTEGER) AS n FROM jobs WHERE kind = 'mail.send' AND status != 'done'`,
      )
      return open!.n === 0 ? true : undefined
    })
    const jobs = await server.core.store.query(`SELECT * FROM jobs WHERE kind = 'mail.send'`)
    expect(jobs.length).toBeGreaterThanOrEqual(2)
    expect(JSON.stringify(jobs)).not.toMatch(/verify-email/)
    // The main thread's log here; what the job workers log is checked in src/features/mail/service.test.ts.
    expect(JSON.stringify(server.logLines)).not.toMatch(/verify-email/)
    const stored = await server.core.store.query('SELECT text FROM dev_outbox')
    expect(JSON.stringify(stored)).not.toMatch(/verify-email/)
  })
})

describe('the dashboard of a local install', () => {
  const home = async (u: PlatformUser) => {
    const res = await u.agent.request('/app/')
    expect(res.status).toBe(200)
    return res.text()
  }

  it('links the administrator to the dev outbox with the number of mails it holds', async () => {
    const held = await eventually('the verification mails in the outbox', async () => {
      const body = (await (await admin.agent.request('/dev/outbox.json')).json()) as OutboxMail[]
      return body.length >= 2 ? body.length : undefined
    })
    expect(await home(admin)).toContain(`<a id="dev-outbox-link" href="/dev/outbox">Dev outbox (${held})</a>`)
  })

  it('shows no dev outbox link to an account that is not the administrator', async () => {
    const page = await home(user)
    expect(page).not.toContain('Dev outbox')
    expect(page).not.toContain('/dev/outbox')
  })

  it('tells the first account it administers the install, with a badge; the second is told nothing', async () => {
    const first = await home(admin)
    expect(first).toContain(
      '<span class="badge admin" title="This account administers this Gatehouse install">Administrator</span>',
    )
    expect(first).toContain('This account administers this Gatehouse install')
    const second = await home(user)
    expect(second).not.toContain('Administrator')
    expect(second).not.toContain('administers this Gatehouse install')
  })

  it('shows no banner: mail leaves (for the outbox)', async () => {
    expect(await home(admin)).not.toContain('id="mail-banner"')
  })
})
