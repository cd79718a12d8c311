import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { signUp } from '../src/identity'
import { Agent } from './support/browserless'
import { activeWorkspace, pkceAuthorization, publicClient } from './support/instances'
import { startTestServer, type TestServer } from './support/server'
import { json, type PlatformUser, signUpUser } from './support/users'

// Issue 57 item 1: an install where no mail can leave (no SMTP_URL, the dev outbox off, no
// workspace server) says so everywhere a mail would have gone, never "sent", and hands the
// platform administrator (and nobody else) a fresh link to pass on instead.

const RP = 'https://rp.example.com'
const atRp = (u: URL) => u.href.startsWith(RP)

let server: TestServer
let admin: PlatformUser
let owner: PlatformUser
/** A workspace the administrator owns, whose login policy requires a verified email. */
let adminWs: string
/** A workspace of an account that is not the administrator. */
let ownerWs: string

beforeAll(async () => {
  server = await startTestServer({ DEV_OUTBOX: 'false' })
  admin = await signUpUser(server, { email: 'root@example.com', password: 'root password 1', name: 'Root' })
  owner = await signUpUser(server, { email: 'owner@example.com', password: 'owner password 1', name: 'O' })
  adminWs = await activeWorkspace(server.core, admin.id, { requireEmailVerification: true })
  ownerWs = await activeWorkspace(server.core, owner.id)
})
afterAll(() => server.stop())

/** A dashboard page as the user's browser gets it. */
async function page(u: PlatformUser, path: string) {
  const res = await u.agent.request(path)
  expect(res.status).toBe(200)
  return res.text()
}

/** A form posted as htmx posts it: the status and the fragment answered. */
async function post(u: PlatformUser, path: string, fields: Record<string, string> = {}) {
  const res = await u.agent.request(path, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'hx-request': 'true' },
    body: new URLSearchParams({ _csrf: u.csrf, ...fields }).toString(),
  })
  return { status: res.status, html: await res.text() }
}

/** The link of a CopyField in a fragment. */
const copiedLink = (html: string) => {
  const value = /<input id="handover-link"[^>]*value="([^"]+)"/.exec(html)?.[1]
  expect(value).toBeString()
  return new URL(value!.replace(/&amp;/g, '&'))
}

const auditActions = async (ws: string) => {
  const r = await json(admin.agent, 'GET', `/v1/workspaces/${ws}/audit-log`)
  expect(r.status).toBe(200)
  return (r.body.items as { action: string }[]).map((e) => e.action)
}

describe('the banner', () => {
  it('tells everyone on the home page that mail is not sent, and how to fix it', async () => {
    for (const u of [admin, owner]) {
      const home = await page(u, '/app/')
      expect(home).toContain('id="mail-banner"')
      expect(home).toContain('<strong>Mail is not sent:</strong>')
      expect(home).toContain('<code>SMTP_URL</code>')
    }
  })
})

describe('a member invitation with no mail path', () => {
  it('says "not sent", and the administrator copies a fresh link the invitee joins with', async () => {
    const members = `/app/workspaces/${adminWs}/settings/members`
    expect(await page(admin, members)).toContain('id="mail-banner"')
    const added = await post(admin, members, { email: 'invitee@example.com', role: 'developer' })
    expect(added.status).toBe(200)
    expect(added.html).toContain(
      'Invitation to invitee@example.com not sent: this workspace cannot send mail.',
    )
    expect(added.html).not.toContain('Invitation sent')
    expect(added.html).toContain('Copy link')

    const list = await json(admin.agent, 'GET', `/v1/workspaces/${adminWs}/members`)
    const invitation = list.body.items.find((m: { email: string }) => m.email === 'invitee@example.com')
    const issued = await post(admin, `${members}/invitations/${invitation.invitation_id}/link`)
    expect(issued.status).toBe(200)
    const link = copiedLink(issued.html)
    expect(link.href).toStartWith(`${server.baseUrl}/app/invitation?token=`)
    expect(await auditActions(adminWs)).toContain('member.invitation_link_issued')

    // The invitee signs up and follows the link: it opens the invitation and accepting joins.
    const invitee = await signUpUser(server, {
      email: 'invitee@example.com',
      password: 'invitee password 1',
      name: 'I',
    })
    const opened = await invitee.agent.request(link)
    expect(opened.status).toBe(200)
    expect(await opened.text()).toContain('Accept')
    const token = link.searchParams.get('token')!
    const accepted = await invitee.agent.request('/app/invitation', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: invitee.csrf, token }).toString(),
    })
    expect(accepted.status).toBe(303)
    expect(accepted.headers.get('location')).toBe(`/app/workspaces/${adminWs}`)
    const after = await json(admin.agent, 'GET', `/v1/workspaces/${adminWs}/members`)
    expect(after.body.items).toContainEqual(
      expect.objectContaining({ email: 'invitee@example.com', status: 'active', role: 'developer' }),
    )
  })

  it('offers no link to a workspace owner who is not the administrator, and refuses it', async () => {
    const members = `/app/workspaces/${ownerWs}/settings/members`
    const added = await post(owner, members, { email: 'friend@example.com', role: 'viewer' })
    expect(added.status).toBe(200)
    expect(added.html).toContain('Invitation to friend@example.com not sent')
    expect(added.html).toContain('Ask the platform administrator for its link.')
    expect(added.html).not.toContain('Copy link')
    const list = await json(owner.agent, 'GET', `/v1/workspaces/${ownerWs}/members`)
    const invitation = list.body.items.find((m: { email: string }) => m.email === 'friend@example.com')
    const refused = await post(owner, `${members}/invitations/${invitation.invitation_id}/link`)
    expect(refused.status).toBe(404)
    expect(refused.html).not.toContain('/app/invitation?token=')
  })
})

describe("an end user's invitation and verification with no mail path", () => {
  it('says "not sent"; the administrator copies a fresh invitation link that opens the invitation', async () => {
    const users = `/app/workspaces/${adminWs}/users`
    const invited = await post(admin, `${users}/invite`, { email: 'enduser@example.com', name: 'E' })
    expect(invited.status).toBe(200)
    expect(invited.html).toContain('Invitation to enduser@example.com not sent')
    expect(invited.html).not.toContain('Invitation sent')
    const list = await json(admin.agent, 'GET', `/v1/workspaces/${adminWs}/users`)
    const user = list.body.items.find((u: { email: string }) => u.email === 'enduser@example.com')
    expect(await page(admin, users)).toContain(`hx-post="${users}/${user.id}/link"`)
    const issued = await post(admin, `${users}/${user.id}/link`)
    expect(issued.status).toBe(200)
    const link = copiedLink(issued.html)
    expect(link.href).toStartWith(`${server.baseUrl}/i/${adminWs}/accept-invite?token=`)
    const opened = await fetch(link)
    expect(opened.status).toBe(200)
    expect(await opened.text()).toContain('name="password"')
    expect(await auditActions(adminWs)).toContain('user.invitation_link_issued')
  })

  it('tells a signing-up user no link went out; the administrator copies a verification link that works', async () => {
    const { config } = await publicClient(server.core, server.baseUrl, adminWs, `${RP}/cb`)
    const { url } = await pkceAuthorization(config, `${RP}/cb`, 'openid email')
    const agent = new Agent(server.baseUrl)
    const signIn = await agent.follow(url, {}, atRp)
    const form = await agent.follow(new URL(`${signIn.url.pathname}/signup`, server.baseUrl))
    const user = { email: 'stuck@example.com', password: 'stuck password 1', name: 'S' }
    const pending = await agent.submit(await form.res.text(), form.url, '/signup', user, atRp)
    const html = await pending.res.text()
    expect(html).toContain('<h1>Check your email</h1>')
    expect(html).not.toContain('We sent a link')
    expect(html).toContain('could not send you a link')

    const users = `/app/workspaces/${adminWs}/users`
    const list = await json(admin.agent, 'GET', `/v1/workspaces/${adminWs}/users?q=stuck`)
    const account = list.body.items[0]
    expect(account.email_verified).toBe(false)
    const issued = await post(admin, `${users}/${account.id}/link`)
    expect(issued.status).toBe(200)
    const link = copiedLink(issued.html)
    expect(link.href).toStartWith(`${server.baseUrl}/i/${adminWs}/verify-email?token=`)
    expect(await (await fetch(link)).text()).toContain('is verified')
    expect(await auditActions(adminWs)).toContain('user.verification_link_issued')

    // The waiting sign-in goes on once the address is verified.
    const proceed = new URL(
      html.match(/<a href="([^"]+)">I have verified my email/)![1]!.replace(/&amp;/g, '&'),
      pending.url,
    )
    expect(atRp((await agent.follow(proceed, {}, atRp)).url)).toBe(true)
  })

  it('tells a user asking for a password reset that no link can go out', async () => {
    const res = await fetch(`${server.baseUrl}/i/${adminWs}/forgot-password`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email: 'stuck@example.com' }).toString(),
    })
    expect(res.status).toBe(200)
    const html = await res.text()
    expect(html).not.toContain('we sent a link')
    expect(html).toContain('This service cannot send email yet, so no link went out.')
  })

  it('offers no link to a workspace owner who is not the administrator, and refuses it', async () => {
    const account = await signUp(server.core, ownerWs, {
      email: 'u@example.com',
      password: 'user password 1',
    })
    const users = `/app/workspaces/${ownerWs}/users`
    expect(await page(owner, users)).not.toContain('Copy link')
    const refused = await post(owner, `${users}/${account.id}/link`)
    expect(refused.status).toBe(404)
    expect(refused.html).not.toContain('verify-email?token=')
  })
})

describe('the settings of a workspace with no mail path', () => {
  it('the login policy warns that a verified email is required and no mail can go out', async () => {
    const policy = await page(admin, `/app/workspaces/${adminWs}/settings/login-policy`)
    expect(policy).toContain('id="verification-warning"')
    const off = await page(owner, `/app/workspaces/${ownerWs}/settings/login-policy`)
    expect(off).not.toContain('id="verification-warning"')
  })

  it('SMTP says no mail server is in effect, not "the platform\'s mail server"', async () => {
    const smtp = await page(admin, `/app/workspaces/${adminWs}/settings/smtp`)
    expect(smtp).not.toContain("The platform's mail server, sending as")
    expect(smtp).toContain("No mail server: this workspace's mail is not sent.")
  })
})
