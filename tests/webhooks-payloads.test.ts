import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { eq } from 'drizzle-orm'
import * as oidc from 'openid-client'
import { SUBSCRIBABLE_EVENTS } from '../src/events/emit'
import { events } from '../src/events/schema'
import { findAccountByEmail } from '../src/identity/accounts'
import { ManualClock } from '../src/shared/clock'
import { Agent } from './support/browserless'
import { pkceAuthorization } from './support/instances'
import { startTestServer, type TestServer } from './support/server'
import { json, type PlatformUser, signUpEndUser, signUpUser } from './support/users'
import { type Receiver, startReceiver } from './support/webhook-receiver'

// SPEC "Events": never sent by webhook are issued tokens, passwords or password hashes (nor any
// other secret). Every event type the product emits today is caused here through real flows (a
// hosted sign-up with a password, a code flow with tokens, tenants, a deletion), with an endpoint
// subscribed to all of them; then every outbox row of the workspace and every delivered body is
// scanned for each secret the flows handled.
const RP = 'https://rp.example.com'
const PASSWORD = 'an end user password 42'
const clock = new ManualClock(Date.now())
let server: TestServer
let receiver: Receiver
let owner: PlatformUser

beforeAll(async () => {
  receiver = startReceiver()
  server = await startTestServer({ WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true' }, undefined, {
    clock,
  })
  owner = await signUpUser(server, {
    email: 'owner@example.com',
    password: 'an owner password',
    name: 'Owner',
  })
})
afterAll(async () => {
  await server.stop()
  await receiver.stop()
})

describe('webhook payloads', () => {
  it('carry no token, password, hash or secret of any flow, for every event type emitted', async () => {
    const created = await json(owner.agent, 'POST', '/v1/workspaces', { name: 'Payloads' })
    expect(created.status).toBe(201)
    await server.tick()
    const ws: string = created.body.id
    const app = await json(owner.agent, 'POST', `/v1/workspaces/${ws}/apps`, {
      name: 'Web',
      app_type: 'web',
      redirect_uris: [`${RP}/cb`],
    })
    expect(app.status).toBe(201)
    const hook = await json(owner.agent, 'POST', `/v1/workspaces/${ws}/webhooks`, {
      url: receiver.url(),
      events: [...SUBSCRIBABLE_EVENTS],
    })
    expect(hook.status).toBe(201)
    expect(
      (
        await json(owner.agent, 'PATCH', `/v1/workspaces/${ws}/login-policy`, {
          require_email_verification: false,
        })
      ).status,
    ).toBe(200)

    // An end user signs up with a password and the app gets its tokens.
    const config = await oidc.discovery(
      new URL(`${server.baseUrl}/i/${ws}`),
      app.body.client_id,
      app.body.client_secret,
      undefined,
      { execute: [oidc.allowInsecureRequests] },
    )
    const { url, verifier } = await pkceAuthorization(config, `${RP}/cb`)
    const back = await signUpEndUser(
      new Agent(server.baseUrl),
      url,
      { email: 'end@example.com', password: PASSWORD, name: 'End' },
      RP,
    )
    const tokens = await oidc.authorizationCodeGrant(config, back, {
      pkceCodeVerifier: verifier,
      expectedState: oidc.skipStateCheck,
    })
    const account = await findAccountByEmail(server.core, ws, 'end@example.com')
    if (!account) throw new Error('the end user was not created')
    const [stored] = await server.core.store.query<{ password_hash: string }>(
      'SELECT password_hash FROM accounts WHERE id = $1',
      [account.id],
    )
    // A tenant made and removed, then the user deleted by an admin.
    const tenant = await json(owner.agent, 'POST', `/v1/workspaces/${ws}/tenants`, {
      slug: 'acme',
      name: 'Acme',
    })
    expect(tenant.status).toBe(201)
    expect((await json(owner.agent, 'DELETE', `/v1/workspaces/${ws}/tenants/${tenant.body.id}`)).status).toBe(
      200,
    )
    expect((await json(owner.agent, 'DELETE', `/v1/workspaces/${ws}/users/${account.id}`)).status).toBe(200)
    await server.tick()
    await server.tick()

    const outbox = await server.core.db.select().from(events).where(eq(events.workspaceId, ws))
    const types = new Set(outbox.map((e) => e.type))
    for (const t of ['user.created', 'session.started', 'tenant.created', 'tenant.deleted', 'user.deleted'])
      expect([t, types.has(t)]).toEqual([t, true])
    const delivered = receiver.to(hook.body.url)
    expect(delivered.length).toBe(outbox.length)

    const secrets: [string, string][] = [
      ['password', PASSWORD],
      ['password hash', stored?.password_hash ?? ''],
      ['access token', tokens.access_token],
      ['id token', tokens.id_token ?? ''],
      ['refresh token', tokens.refresh_token ?? ''],
      ['client secret', app.body.client_secret],
      ['webhook secret', hook.body.secret],
      ['authorization code', back.searchParams.get('code') ?? ''],
    ]
    for (const [what, value] of secrets) expect([what, value.length > 8]).toEqual([what, true])
    const texts = [...outbox.map((e) => JSON.stringify(e)), ...delivered.map((d) => d.raw)]
    for (const text of texts)
      for (const [what, value] of secrets) expect([what, text.includes(value)]).toEqual([what, false])
  })
})
