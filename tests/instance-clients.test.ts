import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { appClientSource } from '../src/features/apps/client-source'
import { issuerFor } from '../src/identity'
import { loadedClientRecords } from '../src/identity/client-records'
import {
  ensureInstanceKeys,
  LOADED_CLIENTS,
  LOADED_RECORD_CHARS,
  loadInstance,
} from '../src/identity/engine/keys'
import { ManualClock } from '../src/shared/clock'
import { type TestCore, testCore } from './support/core'
import { activeWorkspace, clientCredentials, registerApp } from './support/instances'
import { startTestServer, type TestServer } from './support/server'

// Issue 27: a cold instance's oldest clients come with its keys, one read (keys.ts OLDEST_CLIENTS,
// over the view of migration `instance_client_records`), so its first token reads no client of its own.
// They are aggregated when read, from the apps as they are then, whoever wrote them: here raw SQL,
// as an operator or `store copy` would write. What the load brings must be what the apps feature's
// own read of the same clients answers. (A deleted app is refused at the very next token request,
// its instance evicted on every node: tests/apps-api.test.ts.)

describe('the clients an instance loads with its keys', () => {
  let core: TestCore
  beforeAll(async () => {
    core = await testCore()
  })
  afterAll(() => core.store.close())

  let n = 0
  const workspaceId = () => `c1c1c1c1-0000-4000-8000-${(++n).toString(16).padStart(12, '0')}`

  const insertApp = (ws: string, clientId: string, type: string, createdAt: number, extra = '[]') =>
    core.store.exec(
      `INSERT INTO apps (id, workspace_id, name, client_id, client_secret_hash, app_type, redirect_uris,
         post_logout_redirect_uris, dev_mode, extra_grants, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [
        `app_${clientId}`,
        ws,
        `The "${type}" app`,
        clientId,
        type === 'web' ? 'ab'.repeat(32) : null,
        type,
        JSON.stringify([`https://${clientId.toLowerCase()}.example.com/cb`, 'http://localhost:3000/cb']),
        JSON.stringify(type === 'spa' ? ['https://spa.example.com/bye'] : []),
        false,
        extra,
        createdAt,
      ],
    )
  const deleteApp = (clientId: string) => core.store.exec('DELETE FROM apps WHERE client_id = $1', [clientId])

  /** The clients the load brought, checked against the apps feature's read of each. */
  async function loaded(ws: string): Promise<string[]> {
    const { clients } = await loadInstance(core, ws)
    const records = loadedClientRecords(clients?.text ?? null)
    const read = await appClientSource(core).find(
      records.map((c) => ({ instanceId: ws, clientId: c.clientId })),
    )
    expect(records as (typeof read)[number][]).toEqual(read)
    return records.map((c) => c.clientId).sort()
  }

  it(`holds the oldest ${LOADED_CLIENTS} of its apps through every write, as the apps feature reads them`, async () => {
    const ws = workspaceId()
    await ensureInstanceKeys(core, ws)
    expect(await loaded(ws)).toEqual([])
    await insertApp(ws, 'web1', 'web', 1)
    await insertApp(ws, 'spa2', 'spa', 2)
    await insertApp(ws, 'native3', 'native', 3, '["urn:ietf:params:oauth:grant-type:device_code"]')
    expect(await loaded(ws)).toEqual(['native3', 'spa2', 'web1'])
    await insertApp(ws, 'web4', 'web', 4)
    await insertApp(ws, 'web5', 'web', 5)
    expect(await loaded(ws)).toEqual(['native3', 'spa2', 'web1', 'web4'])
    // One of the four gone: the fifth takes its place.
    await deleteApp('spa2')
    expect(await loaded(ws)).toEqual(['native3', 'web1', 'web4', 'web5'])
    // A change by hand is in the next load.
    await core.store.exec(`UPDATE apps SET redirect_uris = $2, name = 'Renamed' WHERE client_id = $1`, [
      'web1',
      '["https://renamed.example.com/cb"]',
    ])
    const { clients } = await loadInstance(core, ws)
    expect(loadedClientRecords(clients?.text ?? null).find((c) => c.clientId === 'web1')).toMatchObject({
      name: 'Renamed',
      redirectUris: ['https://renamed.example.com/cb'],
    })
    for (const id of ['web1', 'native3', 'web4', 'web5']) await deleteApp(id)
    expect(await loaded(ws)).toEqual([])
  })

  it('loads the instance whatever an app row holds: a malformed one is left to its own read', async () => {
    const ws = workspaceId()
    await ensureInstanceKeys(core, ws)
    await insertApp(ws, 'good1', 'web', 1)
    await insertApp(ws, 'bad2', 'web', 2)
    await core.store.exec(`UPDATE apps SET redirect_uris = 'not json' WHERE client_id = $1`, ['bad2'])
    const { keys, clients } = await loadInstance(core, ws)
    expect(keys?.keys).toHaveLength(2)
    expect(loadedClientRecords(clients?.text ?? null).map((c) => c.clientId)).toEqual(['good1'])
    // Its own read answers it as no client (logged): its token requests are refused.
    expect(await appClientSource(core).find([{ instanceId: ws, clientId: 'bad2' }])).toEqual([null])
  })

  it(`leaves an app whose record passes ${LOADED_RECORD_CHARS} characters to its read by id`, async () => {
    const ws = workspaceId()
    await ensureInstanceKeys(core, ws)
    await insertApp(ws, 'large1', 'web', 1)
    await insertApp(ws, 'small2', 'web', 2)
    const many = Array.from(
      { length: 60 },
      (_, i) => `https://rp.example.com/callback/${i}/${'x'.repeat(60)}`,
    )
    await core.store.exec('UPDATE apps SET redirect_uris = $2 WHERE client_id = $1', [
      'large1',
      JSON.stringify(many),
    ])
    // The next oldest takes its place in the load; the large one is whole when read by id.
    expect(await loaded(ws)).toEqual(['small2'])
    const [large] = await appClientSource(core).find([{ instanceId: ws, clientId: 'large1' }])
    expect(large?.redirectUris).toEqual(many)
  })

  it("is right whichever is written first, and never holds another workspace's app", async () => {
    // Apps before the instance's keys (provisioning after an import, a copy in any order).
    const appsFirst = workspaceId()
    const other = workspaceId()
    await insertApp(appsFirst, 'first-a', 'web', 10)
    await insertApp(other, 'other-a', 'web', 11)
    await ensureInstanceKeys(core, appsFirst)
    await ensureInstanceKeys(core, other)
    expect(await loaded(appsFirst)).toEqual(['first-a'])
    expect(await loaded(other)).toEqual(['other-a'])
    // An app moved to another workspace by hand leaves the one and joins the other.
    await core.store.exec('UPDATE apps SET workspace_id = $2 WHERE client_id = $1', ['first-a', other])
    expect(await loaded(appsFirst)).toEqual([])
    expect(await loaded(other)).toEqual(['first-a', 'other-a'])
    // No row, no clients.
    expect((await loadInstance(core, workspaceId())).clients).toBeNull()
  })
})

describe("a cold instance's first tokens", () => {
  // Turned between the apps made, so that which four are the oldest is known.
  const clock = new ManualClock(Date.now())
  let server: TestServer
  /** The statements the server ran that read apps' clients by id: the ids asked. */
  const clientReads: string[][] = []
  beforeAll(async () => {
    server = await startTestServer({}, undefined, { clock })
    const store = server.core.store
    const query = store.query.bind(store)
    store.query = ((text: string, params?: readonly unknown[]) => {
      if (/FROM instance_client_records\s+WHERE client_id/.test(text)) {
        const ids = String(params?.[0])
        clientReads.push(ids.startsWith('[') ? (JSON.parse(ids) as string[]) : [ids])
      }
      return query(text, params)
    }) as typeof store.query
  })
  afterAll(() => server.stop())

  it('read no client of those its load brought, and the others by id', async () => {
    const ws = await activeWorkspace(server.core)
    const made = []
    for (let i = 0; i <= LOADED_CLIENTS; i++) {
      made.push(
        await registerApp(server.core, ws, { type: 'web', redirectUris: ['https://rp.example.com/cb'] }),
      )
      clock.advance(1)
    }
    const issuer = issuerFor(server.core.config, ws)
    expect((await fetch(`${issuer}/.well-known/openid-configuration`)).status).toBe(200)
    for (const app of made)
      expect((await clientCredentials(issuer, app.clientId, app.clientSecret!)).status).toBe(200)
    expect(clientReads).toEqual([[made[LOADED_CLIENTS]!.clientId]])
    // A secret that is not the client's is refused, whether its client came with the load or not.
    expect((await clientCredentials(issuer, made[0]!.clientId, 'not-the-secret')).status).toBe(401)
    expect((await clientCredentials(issuer, made[LOADED_CLIENTS]!.clientId, 'not-the-secret')).status).toBe(
      401,
    )
  })

  it("answers another workspace's client as unknown, though both instances loaded theirs", async () => {
    const [a, b] = [await activeWorkspace(server.core), await activeWorkspace(server.core)]
    const appA = await registerApp(server.core, a, {
      type: 'web',
      redirectUris: ['https://a.example.com/cb'],
    })
    const appB = await registerApp(server.core, b, {
      type: 'web',
      redirectUris: ['https://b.example.com/cb'],
    })
    const [issuerA, issuerB] = [issuerFor(server.core.config, a), issuerFor(server.core.config, b)]
    expect((await clientCredentials(issuerA, appA.clientId, appA.clientSecret!)).status).toBe(200)
    expect((await clientCredentials(issuerB, appB.clientId, appB.clientSecret!)).status).toBe(200)
    const crossed = await clientCredentials(issuerB, appA.clientId, appA.clientSecret!)
    expect(crossed.status).toBe(401)
    expect(await crossed.json()).toMatchObject({ error: 'invalid_client' })
  })
})
