import { describe, expect, it } from 'bun:test'
import { Elysia } from 'elysia'
import { testCore } from '../../../tests/support/core'
import { createAuth } from '../../app'
import type { Core } from '../../core'
import { accounts, PLATFORM } from '../../identity'
import { newId } from '../../shared/ids'
import { errorsPlugin } from '../../shared/plugins/errors'
import { createSession } from '../auth/sessions'
import { deliverMail } from './delivery'
import { devOutboxRoutes } from './routes'
import { devOutbox } from './schema'

// Composed as in the app: the errors plugin turns a missing route into the usual 404 body.
const appFor = (core: Core) =>
  new Elysia().use(errorsPlugin(core.log)).use(devOutboxRoutes(core, createAuth(core)))

/** A platform account with a dashboard session; answers its session cookie. */
async function signedIn(core: Core, isPlatformAdmin: boolean): Promise<string> {
  const id = newId('usr')
  const now = core.clock.now()
  await core.db.insert(accounts).values({
    id,
    instanceId: PLATFORM,
    email: `${id}@example.com`,
    isPlatformAdmin,
    createdAt: now,
    updatedAt: now,
  })
  return `gh_session=${(await createSession(core, id, null)).cookie}`
}

const get = (core: Core, path: string, cookie?: string) =>
  appFor(core).handle(new Request(`http://localhost${path}`, { headers: cookie ? { cookie } : {} }))

/** A local install as the test servers run it: HOST and BASE_URL on loopback, no SMTP. */
const localCore = async (env: Record<string, string> = {}) => {
  const core = await testCore({ HOST: '127.0.0.1', ...env })
  return { core, admin: await signedIn(core, true) }
}

const reset = {
  to: 'ada@example.com',
  subject: 'Reset your password',
  text: 'Reset it at http://localhost:8080/i/ws/reset?token=t0k3n&x=1.\nIgnore this mail otherwise.',
}

describe('GET /dev/outbox', () => {
  it('lists the mails of the outbox, newest first, with clickable links', async () => {
    const { core, admin } = await localCore()
    await deliverMail(core, { to: 'old@example.com', subject: 'Older mail', text: 'first' })
    core.clock.advance(60_000)
    await deliverMail(core, reset)
    const res = await get(core, '/dev/outbox', admin)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(res.headers.get('cache-control')).toBe('no-store')
    const html = await res.text()
    expect(html).toContain('<h2>Reset your password</h2>')
    expect(html).toContain('ada@example.com')
    expect(html).toContain(new Date(core.clock.now()).toISOString())
    const link = 'http://localhost:8080/i/ws/reset?token=t0k3n&amp;x=1'
    expect(html).toContain(`<a href="${link}">${link}</a>.`)
    expect(html.indexOf('Reset your password')).toBeLessThan(html.indexOf('Older mail'))
  })

  it('escapes the content of a mail', async () => {
    const { core, admin } = await localCore()
    await deliverMail(core, {
      to: '"<b>"@example.com',
      subject: '<script>alert(1)</script>',
      text: 'see http://localhost/"><img src=x onerror=alert(2)>',
    })
    const html = await (await get(core, '/dev/outbox', admin)).text()
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
    expect(html).not.toContain('<script')
    expect(html).not.toContain('<img')
    expect(html).not.toContain('<b>')
    expect(html).toContain('<a href="http://localhost/">http://localhost/</a>&quot;&gt;&lt;img')
  })

  it('says so when the outbox is empty', async () => {
    const { core, admin } = await localCore()
    const html = await (await get(core, '/dev/outbox', admin)).text()
    expect(html).toContain('No mail yet.')
  })

  it('keeps only the latest 50', async () => {
    const { core, admin } = await localCore()
    for (let i = 0; i < 51; i++) {
      core.clock.advance(1_000)
      await deliverMail(core, { to: 'a@example.com', subject: `mail #${i}`, text: 'x' })
    }
    const html = await (await get(core, '/dev/outbox', admin)).text()
    expect(html.match(/<article>/g)).toHaveLength(50)
    expect(html).toContain('mail #50')
    expect(html).not.toContain('mail #0<')
  })
})

describe('GET /dev/outbox.json', () => {
  it('returns the mails as JSON, newest first', async () => {
    const { core, admin } = await localCore()
    await deliverMail(core, { ...reset, subject: 'first', workspaceId: 'ws-1' })
    core.clock.advance(1_000)
    await deliverMail(core, { ...reset, html: '<p>hi</p>' })
    const res = await get(core, '/dev/outbox.json', admin)
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(await res.json()).toEqual([
      {
        id: expect.stringMatching(/^mail_/),
        workspace_id: null,
        to: reset.to,
        subject: reset.subject,
        text: reset.text,
        html: '<p>hi</p>',
        created_at: new Date(core.clock.now()).toISOString(),
      },
      // A text mail gets its HTML part when it is sent (render.tsx).
      expect.objectContaining({
        subject: 'first',
        workspace_id: 'ws-1',
        html: expect.stringContaining('<!doctype html>'),
      }),
    ])
  })
})

describe('who may read the dev outbox', () => {
  it('answers 404 to a signed-in user who is not the platform administrator', async () => {
    const { core } = await localCore()
    await deliverMail(core, reset)
    const user = await signedIn(core, false)
    for (const path of ['/dev/outbox', '/dev/outbox.json']) {
      const res = await get(core, path, user)
      expect(res.status).toBe(404)
      expect(await res.json()).toEqual({ detail: 'Not Found' })
    }
  })

  it('sends a signed-out browser to sign in, and answers 401 to a signed-out API call', async () => {
    const { core } = await localCore()
    await deliverMail(core, reset)
    const page = await get(core, '/dev/outbox')
    expect(page.status).toBe(303)
    expect(page.headers.get('location')).toBe('/v1/auth/login?next=%2Fdev%2Foutbox')
    const json = await get(core, '/dev/outbox.json')
    expect(json.status).toBe(401)
    expect(await json.json()).toEqual({ detail: 'Not authenticated' })
  })
})

describe('what the dev outbox keeps', () => {
  it('stores the text and html sealed, never a link in clear', async () => {
    const { core } = await localCore()
    await deliverMail(core, {
      ...reset,
      html: '<a href="http://localhost:8080/i/ws/reset?token=t0k3n">x</a>',
    })
    const raw = JSON.stringify(await core.store.query('SELECT * FROM dev_outbox'))
    expect(raw).toContain('Reset your password')
    expect(raw).not.toContain('t0k3n')
  })

  it('forgets mails older than 24 hours when it is read or written', async () => {
    const { core, admin } = await localCore()
    await deliverMail(core, { ...reset, subject: 'old' })
    core.clock.advance(24 * 3600_000 + 1)
    const json = (await (await get(core, '/dev/outbox.json', admin)).json()) as unknown[]
    expect(json).toEqual([])
    expect(await core.db.select().from(devOutbox)).toHaveLength(0)

    await deliverMail(core, { ...reset, subject: 'kept' })
    core.clock.advance(24 * 3600_000 + 1)
    await deliverMail(core, { ...reset, subject: 'new' })
    expect(await core.db.select({ subject: devOutbox.subject }).from(devOutbox)).toEqual([{ subject: 'new' }])
  })
})

describe('when the dev outbox exists', () => {
  const cases: [string, Record<string, string>][] = [
    ['a public BASE_URL', { HOST: '127.0.0.1', BASE_URL: 'https://auth.example.com' }],
    [
      'a public BASE_URL that only starts like localhost',
      { HOST: '127.0.0.1', BASE_URL: 'http://localhost.example.com' },
    ],
    ['SMTP configured, even on localhost', { HOST: '127.0.0.1', SMTP_URL: 'smtp://127.0.0.1:2525' }],
    ['DEV_OUTBOX=false', { HOST: '127.0.0.1', DEV_OUTBOX: 'false' }],
  ]
  for (const [name, env] of cases) {
    it(`does not exist with ${name}`, async () => {
      const core = await testCore(env)
      const admin = await signedIn(core, true)
      await core.db
        .insert(devOutbox)
        .values({ id: 'mail_1', to: 'a@example.com', subject: 'reset link', text: 'x', createdAt: 0 })
      for (const path of ['/dev/outbox', '/dev/outbox.json']) {
        const res = await get(core, path, admin)
        expect(res.status).toBe(404)
        expect(await res.json()).toEqual({ detail: 'Not Found' })
      }
    })
  }

  it('exists with a loopback BASE_URL and no SMTP, whatever HOST is', async () => {
    for (const env of [
      { HOST: '0.0.0.0', BASE_URL: 'http://localhost:8080' },
      { HOST: '127.0.0.1', BASE_URL: 'http://127.0.0.1:8080' },
      { HOST: '::1', BASE_URL: 'http://[::1]:8080' },
      { HOST: 'localhost', BASE_URL: 'http://localhost:8080' },
    ]) {
      const core = await testCore(env)
      expect((await get(core, '/dev/outbox', await signedIn(core, true))).status).toBe(200)
    }
  })

  it('exists with DEV_OUTBOX=true on every interface', async () => {
    const core = await testCore({ HOST: '0.0.0.0', DEV_OUTBOX: 'true' })
    expect((await get(core, '/dev/outbox', await signedIn(core, true))).status).toBe(200)
  })
})
