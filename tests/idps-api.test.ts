import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ManualClock } from '../src/shared/clock'
import { type Caller, callApi, keyCaller, type Person, person } from './support/callers'
import { activeWorkspace } from './support/instances'
import { startTestServer, type TestServer } from './support/server'
import type { Json } from './support/users'

// SPEC "Login policy, IdPs, users" and DESIGN "IdPs": a workspace's external identity providers
// through the API (the sign-in through them is a later part of issue 29).
const clock = new ManualClock(Date.now())
let server: TestServer

beforeAll(async () => {
  server = await startTestServer({}, undefined, { clock })
})
afterAll(() => server.stop())

const api = (who: Caller, method: string, path: string, body?: unknown) =>
  callApi(server.baseUrl, who, method, path, body)
const idpsOf = (ws: string) => `/v1/workspaces/${ws}/idps`

async function workspaceWithOwner(): Promise<{ owner: Person; ws: string }> {
  const owner = await person(server.core)
  return { owner, ws: await activeWorkspace(server.core, owner.id) }
}

describe('identity providers', () => {
  it('creates each type active at once (201, the redirect URI to register, never the secret) and lists them', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const google = await api(owner, 'POST', idpsOf(ws), {
      type: 'google',
      client_id: 'g-client.apps.googleusercontent.com',
      client_secret: 'g-secret-value-1234',
    })
    expect(google.status).toBe(201)
    expect(google.body).toEqual({
      id: expect.stringMatching(/^idp_[0-9A-HJKMNP-TV-Z]{26}$/),
      type: 'google',
      name: 'Google',
      client_id: 'g-client.apps.googleusercontent.com',
      issuer: null,
      scopes: ['openid', 'email', 'profile'],
      redirect_uri: `${server.baseUrl}/i/${ws}/broker/callback`,
      trust_email: false,
      trust_mfa: false,
      created_at: expect.any(String),
    })
    const oidc = await api(owner, 'POST', idpsOf(ws), {
      type: 'oidc',
      name: 'Acme SSO',
      client_id: 'acme',
      client_secret: 'acme-secret-5678',
      issuer: 'https://login.acme.example/',
      scopes: ['openid', 'email'],
    })
    expect(oidc.status).toBe(201)
    expect(oidc.body).toMatchObject({ type: 'oidc', name: 'Acme SSO', issuer: 'https://login.acme.example' })
    const github = await api(owner, 'POST', idpsOf(ws), {
      type: 'github',
      client_id: 'gh',
      client_secret: 'gh-secret-9',
    })
    expect(github.body).toMatchObject({ name: 'GitHub', scopes: ['read:user', 'user:email'] })

    const list = await api(owner, 'GET', idpsOf(ws))
    expect(list.status).toBe(200)
    expect(list.body.total).toBe(3)
    expect(list.body.items.map((i: Json) => i.id)).toEqual([github.body.id, oidc.body.id, google.body.id])
    expect(JSON.stringify(list.body)).not.toContain('secret-')
    // Sealed at rest: no column holds the secret in clear.
    const rows = await server.core.store.query<Record<string, unknown>>(
      'SELECT * FROM idps WHERE workspace_id = $1',
      [ws],
    )
    expect(rows).toHaveLength(3)
    for (const secret of ['g-secret-value-1234', 'acme-secret-5678', 'gh-secret-9'])
      expect(JSON.stringify(rows)).not.toContain(secret)
  })

  it('refuses what it cannot use with 422 at the field', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const bad: [Record<string, unknown>, string][] = [
      [{ type: 'oidc', client_id: 'a', client_secret: 'b' }, 'issuer'],
      [
        { type: 'google', client_id: 'a', client_secret: 'b', issuer: 'https://accounts.google.com' },
        'issuer',
      ],
      [{ type: 'oidc', client_id: 'a', client_secret: 'b', issuer: 'http://login.acme.example' }, 'issuer'],
      [{ type: 'oidc', client_id: 'a', client_secret: 'b', issuer: 'https://169.254.169.254' }, 'issuer'],
      [{ type: 'oidc', client_id: 'a', client_secret: 'b', issuer: 'https://localhost/' }, 'issuer'],
      // IPv4-compatible IPv6 holding loopback and the metadata address.
      [{ type: 'oidc', client_id: 'a', client_secret: 'b', issuer: 'https://[::127.0.0.1]' }, 'issuer'],
      [{ type: 'oidc', client_id: 'a', client_secret: 'b', issuer: 'https://[::a9fe:a9fe]/' }, 'issuer'],
      [{ type: 'myspace', client_id: 'a', client_secret: 'b' }, 'type'],
      [{ type: 'google', client_id: '', client_secret: 'b' }, 'client_id'],
      // Scopes every sign-in would fail without: the ID token's, GitHub's verified address.
      [{ type: 'google', client_id: 'a', client_secret: 'b', scopes: ['email', 'profile'] }, 'scopes'],
      [{ type: 'github', client_id: 'a', client_secret: 'b', scopes: ['read:user'] }, 'scopes'],
    ]
    for (const [body, field] of bad) {
      const res = await api(owner, 'POST', idpsOf(ws), body)
      expect([field, res.status]).toEqual([field, 422])
      expect(res.body.detail[0].loc.slice(0, 2)).toEqual(['body', field])
    }
    expect((await api(owner, 'GET', idpsOf(ws))).body.total).toBe(0)
  })

  it('deletes twice with 200 twice; the IdP is gone from the list, and the change is audited', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const created = await api(owner, 'POST', idpsOf(ws), {
      type: 'github',
      client_id: 'gh',
      client_secret: 'gh-s',
    })
    for (let i = 0; i < 2; i++) {
      const res = await api(owner, 'DELETE', `${idpsOf(ws)}/${created.body.id}`)
      expect(res).toEqual({ status: 200, body: { deleted: true }, headers: expect.anything() })
    }
    expect((await api(owner, 'GET', idpsOf(ws))).body).toEqual({ items: [], total: 0 })
    const audit = await api(owner, 'GET', `/v1/workspaces/${ws}/audit-log`)
    const actions = audit.body.items.map((e: Json) => e.action)
    expect(actions).toContain('idp.created')
    expect(actions).toContain('idp.deleted')
    expect(actions.filter((a: string) => a === 'idp.deleted')).toHaveLength(1)
  })

  it('lets workspace:read list, and only workspace:write create or delete', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const viewer = await person(server.core, { ws, role: 'viewer' })
    const reader = await keyCaller(server.core, ws, ['workspace:read'])
    const created = await api(owner, 'POST', idpsOf(ws), {
      type: 'github',
      client_id: 'gh',
      client_secret: 'gh-s',
    })
    for (const who of [viewer, reader]) {
      expect((await api(who, 'GET', idpsOf(ws))).body.total).toBe(1)
      expect(
        (await api(who, 'POST', idpsOf(ws), { type: 'github', client_id: 'x', client_secret: 'y' })).status,
      ).toBe(403)
      expect((await api(who, 'DELETE', `${idpsOf(ws)}/${created.body.id}`)).status).toBe(403)
    }
    // Another workspace's IdP is not reachable from here.
    const other = await workspaceWithOwner()
    expect((await api(other.owner, 'DELETE', `${idpsOf(other.ws)}/${created.body.id}`)).status).toBe(200)
    expect((await api(owner, 'GET', idpsOf(ws))).body.total).toBe(1)
  })

  it('lets only workspace:admin trust an IdP with addresses or second factors (audited)', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const developer = await person(server.core, { ws, role: 'developer' })
    const writer = await keyCaller(server.core, ws, ['workspace:write'])
    const github = { type: 'github', client_id: 'gh', client_secret: 'gh-s' }
    // A developer's IdP asserting a victim's verified address would sign in as the victim.
    for (const who of [developer, writer]) {
      for (const flag of ['trust_email', 'trust_mfa']) {
        const res = await api(who, 'POST', idpsOf(ws), { ...github, [flag]: true })
        expect([flag, res.status]).toEqual([flag, 403])
        expect(res.body.detail).toContain(`${flag} needs the workspace:admin scope`)
      }
      const plain = await api(who, 'POST', idpsOf(ws), { ...github, trust_email: false, trust_mfa: false })
      expect(plain.status).toBe(201)
      expect(plain.body).toMatchObject({ trust_email: false, trust_mfa: false })
    }
    const admin = await person(server.core, { ws, role: 'admin' })
    const key = await keyCaller(server.core, ws, ['workspace:admin'])
    const trusted = await api(admin, 'POST', idpsOf(ws), { ...github, trust_email: true, trust_mfa: true })
    expect(trusted.status).toBe(201)
    expect(trusted.body).toMatchObject({ trust_email: true, trust_mfa: true })
    const byKey = await api(key, 'POST', idpsOf(ws), { ...github, trust_mfa: true })
    expect(byKey.body).toMatchObject({ trust_email: false, trust_mfa: true })
    const listed = await api(owner, 'GET', idpsOf(ws))
    expect(listed.body.items.map((i: Json) => [i.trust_email, i.trust_mfa])).toEqual([
      [false, true],
      [true, true],
      [false, false],
      [false, false],
    ])
    const audit = await api(owner, 'GET', `/v1/workspaces/${ws}/audit-log?action=idp.created`)
    const entry = audit.body.items.find((e: Json) => e.target.id === trusted.body.id)
    expect(entry.changes).toMatchObject({ trust_email: { to: true }, trust_mfa: { to: true } })
  })
})
