import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { asc, eq } from 'drizzle-orm'
import { decodeJwt, generateKeyPair, importPKCS8 } from 'jose'
import { auditLog } from '../src/audit/schema'
import { createSession, sessionCookieName } from '../src/features/auth/sessions'
import { machineKeys } from '../src/features/machine-keys/schema'
import { workspaceMembers } from '../src/features/workspaces/schema'
import { issuerFor, PLATFORM, signUp } from '../src/identity'
import { ManualClock } from '../src/shared/clock'
import { activeWorkspace } from './support/instances'
import { JWT_BEARER, type KeyFile, signAssertion } from './support/machine-keys'
import { startTestServer, type TestServer } from './support/server'
import type { Json } from './support/users'

// Issue 25, items 3 and 4: machine keys through the API (create, list, get, rotate, revoke) and the
// RFC 7523 jwt-bearer exchange at POST /v1/auth/token, on the server's ManualClock: rotation's 24
// hours and its durable revocation job, revocation with tokens that end at their 15 minutes, replayed
// and foreign assertions, scope subsets, and the audit rows with their actor.
const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE

const clock = new ManualClock(Date.now())
let server: TestServer

beforeAll(async () => {
  server = await startTestServer({}, undefined, { clock })
})
afterAll(async () => {
  await server.stop()
})
beforeEach(() => clock.set(Date.now()))

interface Person {
  id: string
  cookie: string
  csrf: string
}
type Caller = Person | { bearer: string }

async function person(role?: { ws: string; role: 'admin' | 'developer' | 'viewer' }): Promise<Person> {
  const email = `p-${crypto.randomUUID()}@example.com`
  const account = await signUp(server.core, PLATFORM, { email, password: 'a long password 1' })
  if (role) {
    const now = server.core.clock.now()
    await server.core.db.insert(workspaceMembers).values({
      workspaceId: role.ws,
      accountId: account.id,
      role: role.role,
      createdAt: now,
      updatedAt: now,
    })
  }
  const { cookie, csrfToken } = await createSession(server.core, account.id, null)
  return { id: account.id, cookie: `${sessionCookieName(server.core)}=${cookie}`, csrf: csrfToken }
}

async function api(who: Caller, method: string, path: string, body?: unknown) {
  const auth: Record<string, string> =
    'bearer' in who
      ? { authorization: `Bearer ${who.bearer}` }
      : { cookie: who.cookie, 'x-csrf-token': who.csrf }
  const res = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { accept: 'application/json', ...auth, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  })
  return { status: res.status, body: (await res.json()) as Json, headers: res.headers }
}

/** An assertion signed with the key file on the server's clock; `claims` override the defaults. */
const assertion = (file: KeyFile, claims: Record<string, unknown> = {}, key?: CryptoKey) =>
  signAssertion(file, { claims, key, nowMs: clock.now() })

async function exchange(form: Record<string, string>, contentType = 'application/x-www-form-urlencoded') {
  const res = await fetch(`${server.baseUrl}/v1/auth/token`, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: contentType.includes('json') ? JSON.stringify(form) : new URLSearchParams(form),
  })
  return { status: res.status, body: (await res.json()) as Json, headers: res.headers }
}

const exchangeKey = async (file: KeyFile, extra: Record<string, string> = {}) =>
  exchange({ grant_type: JWT_BEARER, assertion: await assertion(file), ...extra })

const keys = (ws: string) => `/v1/workspaces/${ws}/machine-keys`

async function workspaceWithOwner() {
  const owner = await person()
  const ws = await activeWorkspace(server.core, owner.id)
  return { owner, ws }
}

async function createKey(who: Caller, ws: string, body: Record<string, unknown> = {}) {
  const res = await api(who, 'POST', keys(ws), { name: 'ci', scopes: ['workspace:write'], ...body })
  expect(res.status).toBe(201)
  return res.body as Json & { key: KeyFile }
}

async function auditOf(ws: string) {
  const rows = await server.core.db
    .select()
    .from(auditLog)
    .where(eq(auditLog.workspaceId, ws))
    .orderBy(asc(auditLog.at), asc(auditLog.id))
  return rows.map((r) => ({ actor: r.actor, action: r.action, target: r.targetId }))
}

describe('creating a machine key', () => {
  it('answers 201 with the key file once; lists and gets never show a secret; only the public key is stored', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const created = await createKey(owner, ws, {
      name: 'deploy',
      scopes: ['workspace:read', 'workspace:write'],
    })
    expect(created.id).toMatch(/^mk_[0-9A-Z]{26}$/)
    expect(created).toMatchObject({
      name: 'deploy',
      scopes: ['workspace:read', 'workspace:write'],
      expires_at: null,
      last_used_at: null,
      status: 'active',
      revokes_at: null,
    })
    expect(created.key).toEqual({
      type: 'service_account',
      key_id: created.id,
      key_secret: expect.stringMatching(
        /^-----BEGIN PRIVATE KEY-----\n[\s\S]+\n-----END PRIVATE KEY-----\n?$/,
      ),
      workspace_id: ws,
      token_url: `${server.baseUrl}/v1/auth/token`,
    })
    await importPKCS8(created.key.key_secret, 'ES256')

    const list = await api(owner, 'GET', keys(ws))
    expect(list.status).toBe(200)
    expect(list.body.total).toBe(1)
    const { key: _key, ...listed } = created
    expect(list.body.items).toEqual([listed])
    const one = await api(owner, 'GET', `${keys(ws)}/${created.id}`)
    expect(one.body).toEqual(listed)
    for (const body of [list.body, one.body]) expect(JSON.stringify(body)).not.toContain('PRIVATE')

    const [row] = await server.core.db.select().from(machineKeys).where(eq(machineKeys.id, created.id))
    const stored = JSON.stringify(row)
    expect(stored).not.toContain(created.key.key_secret.split('\n')[1]!.slice(0, 40))
    expect(JSON.parse(row!.publicJwk)).toEqual({
      kty: 'EC',
      crv: 'P-256',
      x: expect.any(String),
      y: expect.any(String),
    })
  })

  it('refuses a past expiry, an unknown scope and an empty scope list with 422 at the field', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const past = await api(owner, 'POST', keys(ws), {
      name: 'x',
      scopes: ['workspace:read'],
      expires_at: new Date(clock.now() - MINUTE).toISOString(),
    })
    expect(past.status).toBe(422)
    expect(past.body.detail[0].loc).toEqual(['body', 'expires_at'])
    const bad = await api(owner, 'POST', keys(ws), { name: 'x', scopes: ['workspace:root'] })
    expect(bad.status).toBe(422)
    expect(bad.body.detail[0].loc).toEqual(['body', 'scopes', 0])
    const none = await api(owner, 'POST', keys(ws), { name: 'x', scopes: [] })
    expect(none.status).toBe(422)
  })

  it('needs workspace:admin: a developer gets 403 naming the scope', async () => {
    const { ws } = await workspaceWithOwner()
    const developer = await person({ ws, role: 'developer' })
    const res = await api(developer, 'POST', keys(ws), { name: 'x', scopes: ['workspace:read'] })
    expect(res.status).toBe(403)
    expect(res.body).toEqual({ detail: 'This action needs the workspace:admin scope' })
    expect((await api(developer, 'GET', keys(ws))).status).toBe(200)
  })

  it('lets a key create keys only with scopes its token holds, expiring no later than itself, audited as key:<id>', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const expires = new Date(clock.now() + 24 * HOUR).toISOString()
    const admin = await createKey(owner, ws, {
      name: 'automation',
      scopes: ['workspace:admin'],
      expires_at: expires,
    })
    const token = (await exchangeKey(admin.key)).body.access_token as string

    // Its token narrowed to write cannot create keys at all.
    const narrow = (await exchangeKey(admin.key, { scope: 'workspace:write' })).body.access_token as string
    expect(
      (await api({ bearer: narrow }, 'POST', keys(ws), { name: 'y', scopes: ['workspace:read'] })).status,
    ).toBe(403)

    const forever = await api({ bearer: token }, 'POST', keys(ws), { name: 'y', scopes: ['workspace:read'] })
    expect(forever.status).toBe(422)
    expect(forever.body.detail[0].loc).toEqual(['body', 'expires_at'])
    const later = new Date(clock.now() + 48 * HOUR).toISOString()
    expect(
      (
        await api({ bearer: token }, 'POST', keys(ws), {
          name: 'y',
          scopes: ['workspace:read'],
          expires_at: later,
        })
      ).status,
    ).toBe(422)

    const child = await createKey({ bearer: token }, ws, {
      name: 'child',
      scopes: ['workspace:read'],
      expires_at: new Date(clock.now() + 12 * HOUR).toISOString(),
    })
    expect(await auditOf(ws)).toContainEqual({
      actor: `key:${admin.id}`,
      action: 'machine_key.created',
      target: child.id,
    })
    expect(await auditOf(ws)).toContainEqual({
      actor: `user:${owner.id}`,
      action: 'machine_key.created',
      target: admin.id,
    })
  })
})

describe('the jwt-bearer exchange', () => {
  it('answers a 15-minute RFC 9068 token with the key scopes, which acts on its workspace only', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const other = await workspaceWithOwner()
    const created = await createKey(owner, ws)
    const res = await exchangeKey(created.key)
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 900,
      scope: 'workspace:write',
    })
    const claims = decodeJwt(res.body.access_token)
    expect(claims).toMatchObject({
      sub: `key:${created.id}`,
      workspace_id: ws,
      scope: 'workspace:write',
      iss: issuerFor(server.core.config, PLATFORM),
      aud: `${server.baseUrl}/v1`,
    })
    expect(claims.exp! - claims.iat!).toBe(900)

    const bearer = { bearer: res.body.access_token as string }
    expect((await api(bearer, 'GET', `/v1/workspaces/${ws}/apps`)).status).toBe(200)
    expect((await api(bearer, 'GET', `/v1/workspaces/${other.ws}/apps`)).status).toBe(404)
    expect((await api(bearer, 'GET', '/v1/auth/me')).body).toEqual({
      kind: 'machine_key',
      id: created.id,
      workspace_id: ws,
      scopes: ['workspace:write'],
      auth: 'bearer',
    })
    expect((await api(owner, 'GET', `${keys(ws)}/${created.id}`)).body.last_used_at).toBe(
      new Date(clock.now()).toISOString(),
    )
  })

  it('is refused at identity instances and on the platform instance', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const created = await createKey(owner, ws, { scopes: ['workspace:admin'] })
    const token = (await exchangeKey(created.key)).body.access_token as string
    for (const instance of [ws, PLATFORM]) {
      const res = await fetch(`${issuerFor(server.core.config, instance)}/me`, {
        headers: { authorization: `Bearer ${token}` },
      })
      expect(res.status).toBe(401)
    }
  })

  it('gives a requested subset of scopes, and refuses a scope the key lacks with invalid_scope', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const created = await createKey(owner, ws, { scopes: ['workspace:write'] })
    const read = await exchangeKey(created.key, { scope: 'workspace:read' })
    expect(read.body.scope).toBe('workspace:read')
    const bearer = { bearer: read.body.access_token as string }
    expect(
      (
        await api(bearer, 'POST', `/v1/workspaces/${ws}/apps`, {
          name: 'a',
          redirect_uris: ['https://a.example/cb'],
        })
      ).status,
    ).toBe(403)
    const admin = await exchangeKey(created.key, { scope: 'workspace:admin' })
    expect(admin.status).toBe(400)
    expect(admin.body).toEqual({
      error: 'invalid_scope',
      error_description: 'This key does not hold workspace:admin',
    })
  })

  it('refuses a replayed jti, another audience, a long-lived assertion, a foreign signature and a bad grant', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const created = await createKey(owner, ws)
    const once = await assertion(created.key)
    expect((await exchange({ grant_type: JWT_BEARER, assertion: once })).status).toBe(200)
    const replay = await exchange({ grant_type: JWT_BEARER, assertion: once })
    expect(replay.status).toBe(400)
    expect(replay.body.error).toBe('invalid_grant')
    expect(replay.body.error_description).toContain('jti')

    const elsewhere = await assertion(created.key, { aud: 'https://other.example/v1/auth/token' })
    const aud = await exchange({ grant_type: JWT_BEARER, assertion: elsewhere })
    expect(aud.body).toEqual({
      error: 'invalid_grant',
      error_description: "The assertion's aud claim is not valid",
    })

    const now = Math.floor(clock.now() / 1000)
    const long = await exchange({
      grant_type: JWT_BEARER,
      assertion: await assertion(created.key, { exp: now + 3601 }),
    })
    expect(long.body.error).toBe('invalid_grant')
    expect(long.body.error_description).toContain('one hour')

    const expired = await exchange({
      grant_type: JWT_BEARER,
      assertion: await assertion(created.key, { iat: now - 900, exp: now - 120 }),
    })
    expect(expired.body).toEqual({
      error: 'invalid_grant',
      error_description: "The assertion's exp claim is not valid",
    })

    const stranger = (await generateKeyPair('ES256')).privateKey
    const forged = await exchange({
      grant_type: JWT_BEARER,
      assertion: await assertion(created.key, {}, stranger),
    })
    expect(forged.body).toEqual({
      error: 'invalid_grant',
      error_description: 'The assertion signature or claims are not valid',
    })

    expect((await exchange({ grant_type: 'client_credentials', assertion: once })).body.error).toBe(
      'unsupported_grant_type',
    )
    expect((await exchange({ grant_type: JWT_BEARER })).body.error).toBe('invalid_request')
    const json = await exchange(
      { grant_type: JWT_BEARER, assertion: await assertion(created.key) },
      'application/json',
    )
    expect(json.status).toBe(400)
    expect(json.body.error).toBe('invalid_request')
  })
})

describe('rotation', () => {
  it('gives a new key with the same name, scopes and expiry; the old one exchanges for 24 hours, then a job revokes it', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const expires = new Date(clock.now() + 30 * 24 * HOUR).toISOString()
    const old = await createKey(owner, ws, {
      name: 'deploy',
      scopes: ['workspace:read'],
      expires_at: expires,
    })
    const rotated = await api(owner, 'POST', `${keys(ws)}/${old.id}/rotate`)
    expect(rotated.status).toBe(201)
    const fresh = rotated.body as Json & { key: KeyFile }
    expect(fresh.id).not.toBe(old.id)
    expect({ name: fresh.name, scopes: fresh.scopes, expires_at: fresh.expires_at }).toEqual({
      name: 'deploy',
      scopes: ['workspace:read'],
      expires_at: expires,
    })
    expect(fresh.key.key_id).toBe(fresh.id)
    const listed = (await api(owner, 'GET', keys(ws))).body.items as Json[]
    expect(listed.find((k) => k.id === old.id)).toMatchObject({
      status: 'rotating',
      revokes_at: new Date(clock.now() + 24 * HOUR).toISOString(),
    })
    expect((await api(owner, 'POST', `${keys(ws)}/${old.id}/rotate`)).status).toBe(409)

    clock.advance(24 * HOUR - SECOND)
    await server.tick()
    const late = await exchangeKey(old.key)
    expect(late.status).toBe(200)
    // Its token does not outlive the key's grace.
    expect(late.body.expires_in).toBe(1)

    clock.advance(2 * SECOND)
    const gone = await exchangeKey(old.key)
    expect(gone.status).toBe(400)
    expect(gone.body.error).toBe('invalid_grant')
    expect(gone.body.error_description).toContain('rotated out')
    expect(gone.body.error_description).toContain(fresh.id)
    expect((await exchangeKey(fresh.key)).status).toBe(200)

    await server.tick()
    const [row] = await server.core.db.select().from(machineKeys).where(eq(machineKeys.id, old.id))
    expect(row).toMatchObject({ revokedReason: 'rotated', revokedAt: row!.revokesAt })
    expect(((await api(owner, 'GET', keys(ws))).body.items as Json[]).map((k) => k.id)).toEqual([fresh.id])
    expect((await api(owner, 'GET', `${keys(ws)}/${old.id}`)).status).toBe(404)
    expect(await auditOf(ws)).toContainEqual({
      actor: `user:${owner.id}`,
      action: 'machine_key.rotated',
      target: old.id,
    })
  })
})

describe('revocation', () => {
  it('refuses a new exchange at once; a token issued before works until minute 15 and fails at 15:01', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const created = await createKey(owner, ws, { scopes: ['workspace:read'] })
    const token = (await exchangeKey(created.key)).body.access_token as string
    const issuedAt = clock.now()

    const del = await api(owner, 'DELETE', `${keys(ws)}/${created.id}`)
    expect(del).toMatchObject({ status: 200, body: { deleted: true } })
    expect((await api(owner, 'DELETE', `${keys(ws)}/${created.id}`)).body).toEqual({ deleted: true })

    const refused = await exchangeKey(created.key)
    expect(refused.status).toBe(400)
    expect(refused.body.error).toBe('invalid_grant')
    expect(refused.body.error_description).toStartWith('This key was revoked at ')

    const read = () => api({ bearer: token }, 'GET', `/v1/workspaces/${ws}/apps`)
    expect((await read()).status).toBe(200)
    clock.set(issuedAt + 15 * MINUTE - SECOND)
    expect((await read()).status).toBe(200)
    clock.set(issuedAt + 15 * MINUTE + SECOND)
    expect((await read()).status).toBe(401)
    expect((await api(owner, 'GET', keys(ws))).body.items).toEqual([])
    expect(await auditOf(ws)).toContainEqual({
      actor: `user:${owner.id}`,
      action: 'machine_key.revoked',
      target: created.id,
    })
  })

  it('says a key expired, and lists it as expired', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const created = await createKey(owner, ws, { expires_at: new Date(clock.now() + HOUR).toISOString() })
    const before = await exchangeKey(created.key)
    expect(before.body.expires_in).toBe(900)
    clock.advance(HOUR - 10 * SECOND)
    expect((await exchangeKey(created.key)).body.expires_in).toBe(10)
    clock.advance(11 * SECOND)
    const after = await exchangeKey(created.key)
    expect(after.body.error).toBe('invalid_grant')
    expect(after.body.error_description).toStartWith('This key expired at ')
    expect((await api(owner, 'GET', `${keys(ws)}/${created.id}`)).body.status).toBe('expired')
    expect((await api(owner, 'POST', `${keys(ws)}/${created.id}/rotate`)).status).toBe(409)
  })
})

describe("docs/machine-keys.md's exchange example", () => {
  it('runs as written with a key file from SERVICE_MACHINE_KEY_PATH and lists the apps', async () => {
    // The server's clock is the real one here: the example signs with the system time.
    clock.set(Date.now())
    const { owner, ws } = await workspaceWithOwner()
    const created = await createKey(owner, ws, { scopes: ['workspace:read'] })
    const page = readFileSync(join(import.meta.dir, '..', 'docs', 'machine-keys.md'), 'utf8')
    const example = /<!-- machine-key-example -->\n```ts\n([\s\S]+?)\n```/.exec(page)?.[1]
    expect(example).toContain('SERVICE_MACHINE_KEY_PATH')
    // Beside node_modules, so `jose` resolves as in a user's project.
    const dir = mkdtempSync(join(import.meta.dir, '..', '.readme-example-'))
    try {
      writeFileSync(join(dir, 'key.json'), JSON.stringify(created.key))
      writeFileSync(join(dir, 'exchange.ts'), example!)
      // Spawned, not spawnSync: the server runs in this process and must go on answering.
      const run = Bun.spawn([process.execPath, join(dir, 'exchange.ts')], {
        env: { ...process.env, SERVICE_MACHINE_KEY_PATH: join(dir, 'key.json') },
        stdout: 'pipe',
        stderr: 'pipe',
      })
      const [stdout, stderr, exitCode] = await Promise.all([
        new Response(run.stdout).text(),
        new Response(run.stderr).text(),
        run.exited,
      ])
      expect(stderr).toBe('')
      expect(exitCode).toBe(0)
      expect(stdout).toContain('items: []')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
    expect((await api(owner, 'GET', `${keys(ws)}/${created.id}`)).body.last_used_at).not.toBeNull()
  })
})

describe('a key whose token outlives it', () => {
  it('cannot mint credentials once its key was revoked or is rotating, though its token still reads', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const revoked = await createKey(owner, ws, { name: 'stolen', scopes: ['workspace:admin'] })
    const token = { bearer: (await exchangeKey(revoked.key)).body.access_token as string }
    const victim = await createKey(owner, ws, { name: 'other' })
    expect((await api(owner, 'DELETE', `${keys(ws)}/${revoked.id}`)).status).toBe(200)

    expect((await api(token, 'GET', keys(ws))).status).toBe(200)
    const minted = await api(token, 'POST', keys(ws), { name: 'backdoor', scopes: ['workspace:admin'] })
    expect(minted.status).toBe(403)
    expect(minted.body.detail).toContain('cannot create or rotate keys')
    expect((await api(token, 'POST', `${keys(ws)}/${victim.id}/rotate`)).status).toBe(403)

    const rotating = await createKey(owner, ws, { name: 'suspect', scopes: ['workspace:admin'] })
    const rotatingToken = { bearer: (await exchangeKey(rotating.key)).body.access_token as string }
    expect((await api(owner, 'POST', `${keys(ws)}/${rotating.id}/rotate`)).status).toBe(201)
    expect(
      (await api(rotatingToken, 'POST', keys(ws), { name: 'x', scopes: ['workspace:read'] })).status,
    ).toBe(403)
  })

  it('cannot rotate a key that would outlive it, nor add members or change roles', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const forever = await createKey(owner, ws, { name: 'forever' })
    const short = await createKey(owner, ws, {
      name: 'short',
      scopes: ['workspace:admin'],
      expires_at: new Date(clock.now() + HOUR).toISOString(),
    })
    const token = { bearer: (await exchangeKey(short.key)).body.access_token as string }
    const rotated = await api(token, 'POST', `${keys(ws)}/${forever.id}/rotate`)
    expect(rotated.status).toBe(403)
    expect(rotated.body).toEqual({ detail: 'A key cannot rotate a key that would outlive it' })

    const invited = await api(token, 'POST', `/v1/workspaces/${ws}/members`, {
      email: `attacker-${crypto.randomUUID()}@example.com`,
      role: 'admin',
    })
    expect(invited.status).toBe(403)
    expect(invited.body.detail).toContain('by people, not by machine keys')
    const developer = await person({ ws, role: 'developer' })
    const promoted = await api(token, 'PATCH', `/v1/workspaces/${ws}/members/${developer.id}`, {
      role: 'admin',
    })
    expect(promoted.status).toBe(403)
  })

  it('refuses a scope request that is not a list of scopes with invalid_scope', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const created = await createKey(owner, ws, { scopes: ['workspace:read'] })
    for (const scope of ['tenant:<img/src=x>:read', 'workspace:read '.repeat(21)]) {
      const res = await exchangeKey(created.key, { scope })
      expect(res.status).toBe(400)
      expect(res.body.error).toBe('invalid_scope')
    }
  })
})
