import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import * as oidc from 'openid-client'
import { Secret, TOTP } from 'otpauth'
import type { Store } from '../src/db/store'
import { billingAccounts, billingMonthlyUsers, billingUsage } from '../src/features/billing/schema'
import { findAccountByEmail } from '../src/identity/accounts'
import { authenticationOptions } from '../src/identity/mfa/passkeys'
import { issueRecoveryCodes } from '../src/identity/mfa/recovery'
import { startTotpEnrolment, useTotpCode } from '../src/identity/mfa/totp'
import { accountLinks, accountPasskeys } from '../src/identity/schema'
import { ManualClock } from '../src/shared/clock'
import { solidPng } from './support/branding'
import { Agent } from './support/browserless'
import { pkceAuthorization } from './support/instances'
import { exchangeForm, signAssertion } from './support/machine-keys'
import { freePort, startTestServer, type TestServer } from './support/server'
import { json, type PlatformUser, signUpEndUser, signUpUser } from './support/users'

// Issue 24, item 2: no workspace data outlives its workspace. The tables are read from the
// database's own catalog, not from a list: every table with a `workspace_id` or `instance_id`
// column must hold rows of a workspace filled through every feature, and none once the workspace
// is deleted and its teardown job has run. A new feature's table fails this test twice over: until
// the fixture below gives it a row, and then until its teardown step removes it.
const RP = 'https://rp.example.com'
const clock = new ManualClock(Date.now())
let server: TestServer
let owner: PlatformUser

beforeAll(async () => {
  // Webhook endpoints on loopback: their deliveries fail (nothing listens), leaving attempts behind.
  server = await startTestServer({ WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true' }, undefined, {
    clock,
  })
  owner = await signUpUser(server, {
    email: 'owner@example.com',
    password: 'an owner password',
    name: 'Owner',
  })
})
afterAll(() => server.stop())

interface OwnedColumn {
  table: string
  column: 'workspace_id' | 'instance_id'
}

/** Every table (no view) with a column naming its workspace (or identity instance), from the catalog. */
async function ownedColumns(store: Store): Promise<OwnedColumn[]> {
  const sql =
    store.dialect === 'sqlite'
      ? `SELECT m.name AS "table", p.name AS "column" FROM sqlite_master m, pragma_table_info(m.name) p
         WHERE m.type = 'table' AND p.name IN ('workspace_id', 'instance_id')`
      : `SELECT c.table_name AS "table", c.column_name AS "column" FROM information_schema.columns c
         JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
         WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
           AND c.column_name IN ('workspace_id', 'instance_id')`
  return (await store.query<OwnedColumn>(sql)).sort((a, b) => a.table.localeCompare(b.table))
}

/** Rows of each owned table that name `workspaceId`. */
async function rowsOf(workspaceId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {}
  for (const { table, column } of await ownedColumns(server.core.store)) {
    const [row] = await server.core.store.query<{ n: number }>(
      `SELECT COUNT(*) AS n FROM ${table} WHERE ${column} = $1`,
      [workspaceId],
    )
    counts[table] = Number(row?.n)
  }
  return counts
}

/** A workspace created and provisioned through the API, as a user would. */
async function provisionedWorkspace(name: string): Promise<string> {
  const created = await json(owner.agent, 'POST', '/v1/workspaces', { name })
  expect(created.status).toBe(201)
  await server.tick()
  const got = await json(owner.agent, 'GET', `/v1/workspaces/${created.body.id}`)
  expect(got.body.state).toBe('active')
  return created.body.id
}

/**
 * Data in every feature: an app, an invitation (and its mail), a member invitation, a rotated machine
 * key and a spent assertion, an end user with every factor and a tenant, tokens.
 */
async function fillEveryFeature(ws: string): Promise<void> {
  const core = server.core
  const app = await json(owner.agent, 'POST', `/v1/workspaces/${ws}/apps`, {
    name: 'Shop',
    app_type: 'web',
    redirect_uris: [`${RP}/cb`],
    dev_mode: true,
  })
  expect(app.status).toBe(201)
  const invited = await json(owner.agent, 'POST', `/v1/workspaces/${ws}/users/invite`, {
    email: 'invited@example.com',
  })
  expect(invited.status).toBe(201)
  // A colleague invited to manage the workspace: the invitation, its mail, and the audit row it writes.
  const colleague = await json(owner.agent, 'POST', `/v1/workspaces/${ws}/members`, {
    email: 'colleague@example.com',
    role: 'developer',
  })
  expect(colleague.status).toBe(201)
  // A "Try sign-in" started from the dashboard and never finished.
  const tried = await owner.agent.request(`/app/workspaces/${ws}/try`, {
    method: 'POST',
    headers: { 'hx-request': 'true', 'x-csrf-token': owner.csrf },
  })
  expect(tried.headers.get('hx-redirect')).toContain(`/i/${ws}/auth?`)
  // A machine key, rotated (its revocation job waits), and an exchange (a spent assertion id).
  const key = await json(owner.agent, 'POST', `/v1/workspaces/${ws}/machine-keys`, {
    name: 'ci',
    scopes: ['workspace:read'],
  })
  expect(key.status).toBe(201)
  const rotated = await json(owner.agent, 'POST', `/v1/workspaces/${ws}/machine-keys/${key.body.id}/rotate`)
  expect(rotated.status).toBe(201)
  const file = rotated.body.key
  const assertion = await signAssertion(file, { nowMs: core.clock.now() })
  const exchanged = await fetch(file.token_url, { method: 'POST', body: exchangeForm(assertion) })
  expect(exchanged.status).toBe(200)
  await server.tick()

  // An end user signs up through the hosted pages (accounts, oidc-provider's rows, events), at once.
  const policy = await json(owner.agent, 'PATCH', `/v1/workspaces/${ws}/login-policy`, {
    require_email_verification: false,
  })
  expect(policy.status).toBe(200)
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
    { email: 'end@example.com', password: 'an end user password', name: 'End' },
    RP,
  )
  await oidc.authorizationCodeGrant(config, back, {
    pkceCodeVerifier: verifier,
    expectedState: oidc.skipStateCheck,
  })

  // Every second factor: an authenticator app with recovery codes, a passkey, an open ceremony.
  const account = await findAccountByEmail(core, ws, 'end@example.com')
  if (!account) throw new Error('the end user was not created')

  // An external identity provider.
  const idp = await json(owner.agent, 'POST', `/v1/workspaces/${ws}/idps`, {
    type: 'github',
    client_id: 'gh-client',
    client_secret: 'gh-secret',
  })
  expect(idp.status).toBe(201)
  // Branding and its logo.
  const branding = await json(owner.agent, 'PATCH', `/v1/workspaces/${ws}/branding`, {
    display_name: 'Acme',
    primary_color: '#0b5fff',
  })
  expect(branding.status).toBe(200)
  const logo = new FormData()
  logo.append('logo', new File([solidPng(2, 2, [0, 0, 0])], 'logo.png'))
  const uploaded = await owner.agent.request(`/v1/workspaces/${ws}/branding/logo`, {
    method: 'POST',
    headers: { 'x-csrf-token': owner.csrf },
    body: logo,
  })
  expect(uploaded.status).toBe(200)
  // A webhook endpoint (nothing listens there), and a tenant whose event it is sent and fails.
  const hook = await json(owner.agent, 'POST', `/v1/workspaces/${ws}/webhooks`, {
    url: `http://127.0.0.1:${await freePort()}/hook`,
    events: ['tenant.created'],
  })
  expect(hook.status).toBe(201)
  // A tenant with the end user as its member.
  const tenant = await json(owner.agent, 'POST', `/v1/workspaces/${ws}/tenants`, {
    slug: 'acme',
    name: 'Acme',
  })
  expect(tenant.status).toBe(201)
  await server.tick()
  const member = await json(owner.agent, 'POST', `/v1/workspaces/${ws}/tenants/${tenant.body.id}/members`, {
    user_id: account.id,
  })
  expect(member.status).toBe(201)
  // An invitation to it by email, still open.
  const toTenant = await json(
    owner.agent,
    'POST',
    `/v1/workspaces/${ws}/tenants/${tenant.body.id}/members/invite`,
    {
      email: 'joining@example.com',
    },
  )
  expect(toTenant.status).toBe(202)
  const enrolment = await startTotpEnrolment(core, account, 'Acme')
  if (!enrolment) throw new Error('no TOTP enrolment')
  const code = new TOTP({ secret: Secret.fromBase32(enrolment.secret) }).generate({
    timestamp: core.clock.now(),
  })
  await core.store.tx(async (tx) => {
    expect(await useTotpCode(tx, core, account.id, code, { confirm: true })).toBe(true)
    await issueRecoveryCodes(tx, core, account)
  })
  await core.db.insert(accountPasskeys).values({
    credentialId: `cred-${account.id}`,
    accountId: account.id,
    instanceId: ws,
    publicKey: 'AA',
    counter: 0,
    transports: ['internal'],
    deviceType: 'singleDevice',
    backedUp: false,
    createdAt: core.clock.now(),
  })
  await authenticationOptions(core, ws, null)
  // The account's identity at an external IdP (written by a sign-in through it: idps-signin.test.ts).
  await core.db.insert(accountLinks).values({
    instanceId: ws,
    idpId: 'idp_01JTEARDOWN0000000000000000',
    subject: 'sub-1',
    accountId: account.id,
    createdAt: core.clock.now(),
  })
  // The workspace's own mail server, last: no mail of this workspace is queued to go through it.
  const smtp = await json(owner.agent, 'PUT', `/v1/workspaces/${ws}/smtp`, {
    host: 'smtp.example.com',
    port: 587,
    username: 'mailer',
    password: 'smtp-secret',
    from_address: 'auth@example.com',
  })
  expect(smtp.status).toBe(200)
  // Billing's mirror and this month's MAU (written by Stripe's events and sign-ins: billing-*.test.ts).
  const month = new Date(core.clock.now()).toISOString().slice(0, 7)
  await core.db.insert(billingAccounts).values({
    workspaceId: ws,
    customerId: `cus_${ws}`,
    createdAt: core.clock.now(),
    updatedAt: core.clock.now(),
  })
  await core.db.insert(billingMonthlyUsers).values({ workspaceId: ws, month, accountId: account.id })
  await core.db.insert(billingUsage).values({ workspaceId: ws, month, mau: 1 })
}

describe('deleting a workspace', () => {
  it('leaves no row of it in any table that names a workspace or an instance', async () => {
    const ws = await provisionedWorkspace('Doomed')
    const other = await provisionedWorkspace('Kept')
    await fillEveryFeature(ws)
    await fillEveryFeature(other)

    const before = await rowsOf(ws)
    const otherBefore = await rowsOf(other)
    expect(Object.keys(before).length).toBeGreaterThan(10)
    const empty = Object.entries(before).filter(([, n]) => n === 0)
    // A table listed here is new: give it a row in fillEveryFeature, so its teardown is tested.
    expect(empty).toEqual([])

    const deleted = await json(owner.agent, 'DELETE', `/v1/workspaces/${ws}`, { confirm: 'Doomed' })
    expect(deleted.status).toBe(202)
    await server.tick()
    expect((await json(owner.agent, 'GET', `/v1/workspaces/${ws}`)).status).toBe(404)

    const after = await rowsOf(ws)
    expect(Object.entries(after).filter(([, n]) => n > 0)).toEqual([])
    // Only its own rows: the other workspace keeps every one of its rows.
    expect(await rowsOf(other)).toEqual(otherBefore)
  })
})
