import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ManualClock } from '../src/shared/clock'
import { callApi, type Person, person } from './support/callers'
import { activeWorkspace } from './support/instances'
import { startTestServer, type TestServer } from './support/server'
import { type SmtpSink, startSmtpServer } from './support/smtp'

// Issue 30, item 2: every mail is multipart (text and HTML), the HTML in the brand its workspace
// has when it is sent, every value of that brand escaped, and no link but the mail's own and the
// workspace's legal ones.
const clock = new ManualClock(Date.now())
let sink: SmtpSink
let server: TestServer

beforeAll(async () => {
  sink = await startSmtpServer()
  server = await startTestServer({ SMTP_URL: sink.url }, undefined, { clock })
})
afterAll(async () => {
  await server.stop()
  await sink.close()
})

async function invite(owner: Person, ws: string, email: string) {
  const res = await callApi(server.baseUrl, owner, 'POST', `/v1/workspaces/${ws}/users/invite`, { email })
  expect(res.status).toBe(201)
  await server.tick()
  return sink.waitFor((m) => m.to !== undefined && JSON.stringify(m.to).includes(email))
}

describe('mails of a workspace', () => {
  it('go as text and HTML, the HTML in the workspace brand, escaped', async () => {
    const owner = await person(server.core)
    const ws = await activeWorkspace(server.core, owner.id)
    const branded = await callApi(server.baseUrl, owner, 'PATCH', `/v1/workspaces/${ws}/branding`, {
      display_name: '<b>Acme</b> & Co',
      primary_color: '#7a1f5c',
      privacy_policy_url: 'https://acme.example/privacy',
      terms_url: 'https://acme.example/terms',
    })
    expect(branded.status).toBe(200)
    const mail = await invite(owner, ws, 'ada@example.com')
    const link = mail.text!.match(/https?:\/\/\S+/)![0]
    expect(link).toContain(`/i/${ws}/accept-invite?token=`)
    const html = String(mail.html)
    expect(html).toContain('&lt;b&gt;Acme&lt;/b&gt; &amp; Co')
    expect(html).not.toContain('<b>Acme</b>')
    expect(html).toContain('border-bottom:3px solid #7a1f5c')
    expect(html).toContain(`href="${link}"`)
    expect(html).toContain('href="https://acme.example/privacy"')
    expect(html).toContain('href="https://acme.example/terms"')
    // The HTML adds no link of its own: the invitation's and the legal ones, nothing else.
    const hrefs = [...html.matchAll(/href="([^"]+)"/g)].map((m) => m[1])
    expect(hrefs.sort()).toEqual([link, 'https://acme.example/privacy', 'https://acme.example/terms'].sort())
  })

  it('follow a branding change on the next mail, and go in the platform look without one', async () => {
    const owner = await person(server.core)
    const ws = await activeWorkspace(server.core, owner.id)
    const plain = await invite(owner, ws, 'grace@example.com')
    expect(String(plain.html)).toContain('Gatehouse')
    expect(String(plain.html)).toContain('#4f46e5')
    await callApi(server.baseUrl, owner, 'PATCH', `/v1/workspaces/${ws}/branding`, {
      display_name: 'Hopper Labs',
      primary_color: '#0b6e4f',
    })
    const after = await invite(owner, ws, 'cobol@example.com')
    expect(String(after.html)).toContain('Hopper Labs')
    expect(String(after.html)).toContain('#0b6e4f')
  })
})
