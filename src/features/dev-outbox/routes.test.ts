import { describe, expect, it } from 'bun:test'
import { Elysia } from 'elysia'
import { testCore } from '../../../tests/support/core'
import type { Core } from '../../core'
import { devOutbox } from '../../db/schema'
import { deliverMail } from '../../shared/mail/mailer'
import { errorsPlugin } from '../../shared/plugins/errors'
import { devOutboxRoutes } from './routes'

// Composed as in the app: the errors plugin turns a missing route into the usual 404 body.
const appFor = (core: Core) => new Elysia().use(errorsPlugin(core.log)).use(devOutboxRoutes(core))
const get = (core: Core, path: string) => appFor(core).handle(new Request(`http://localhost${path}`))

const reset = {
  to: 'ada@example.com',
  subject: 'Reset your password',
  text: 'Reset it at http://localhost:8080/i/ws/reset?token=t0k3n&x=1.\nIgnore this mail otherwise.',
}

describe('GET /dev/outbox', () => {
  it('lists the mails of the outbox, newest first, with clickable links', async () => {
    const core = testCore()
    await deliverMail(core, { to: 'old@example.com', subject: 'Older mail', text: 'first' })
    core.clock.advance(60_000)
    await deliverMail(core, reset)
    const res = await get(core, '/dev/outbox')
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
    const core = testCore()
    await deliverMail(core, {
      to: '"<b>"@example.com',
      subject: '<script>alert(1)</script>',
      text: 'see http://localhost/"><img src=x onerror=alert(2)>',
    })
    const html = await (await get(core, '/dev/outbox')).text()
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
    expect(html).not.toContain('<script')
    expect(html).not.toContain('<img')
    expect(html).not.toContain('<b>')
    expect(html).toContain('<a href="http://localhost/">http://localhost/</a>&quot;&gt;&lt;img')
  })

  it('says so when the outbox is empty', async () => {
    const html = await (await get(testCore(), '/dev/outbox')).text()
    expect(html).toContain('No mail yet.')
  })

  it('keeps only the latest 50', async () => {
    const core = testCore()
    for (let i = 0; i < 51; i++) {
      core.clock.advance(1_000)
      await deliverMail(core, { to: 'a@example.com', subject: `mail #${i}`, text: 'x' })
    }
    const html = await (await get(core, '/dev/outbox')).text()
    expect(html.match(/<article>/g)).toHaveLength(50)
    expect(html).toContain('mail #50')
    expect(html).not.toContain('mail #0<')
  })
})

describe('GET /dev/outbox.json', () => {
  it('returns the mails as JSON, newest first', async () => {
    const core = testCore()
    await deliverMail(core, { ...reset, subject: 'first', workspaceId: 'ws-1' })
    core.clock.advance(1_000)
    await deliverMail(core, { ...reset, html: '<p>hi</p>' })
    const res = await get(core, '/dev/outbox.json')
    expect(res.status).toBe(200)
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
      expect.objectContaining({ subject: 'first', workspace_id: 'ws-1', html: null }),
    ])
  })
})

describe('the dev outbox on a real deployment', () => {
  const cases: [string, Record<string, string>][] = [
    ['a public BASE_URL', { BASE_URL: 'https://auth.example.com' }],
    ['a public BASE_URL that only starts like localhost', { BASE_URL: 'http://localhost.example.com' }],
    ['SMTP configured, even on localhost', { SMTP_URL: 'smtp://127.0.0.1:2525' }],
  ]
  for (const [name, env] of cases) {
    it(`does not exist with ${name}`, async () => {
      const core = testCore(env)
      core.db
        .insert(devOutbox)
        .values({ id: 'mail_1', to: 'a@example.com', subject: 'reset link', text: 'x', createdAt: 0 })
        .run()
      for (const path of ['/dev/outbox', '/dev/outbox.json']) {
        const res = await get(core, path)
        expect(res.status).toBe(404)
        expect(await res.json()).toEqual({ detail: 'Not Found' })
      }
    })
  }

  it('exists on 127.0.0.1 and [::1] too', async () => {
    for (const BASE_URL of ['http://127.0.0.1:8080', 'http://[::1]:8080']) {
      expect((await get(testCore({ BASE_URL }), '/dev/outbox')).status).toBe(200)
    }
  })
})
