import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { rmSync } from 'node:fs'
import { embeddedMigrations } from '../src/db/migrations.macro' with { type: 'macro' }
import { PLATFORM, platformClient } from '../src/identity'
import { testApp } from './support/app'

// The platform instance's clients (the console, the CLI) are defined in code. A database from an
// earlier version holds them as `apps` rows: they are never read, and migration 0006 removes them.

let t: Awaited<ReturnType<typeof testApp>>

beforeAll(async () => {
  t = await testApp()
})
afterAll(() => rmSync(t.core.config.dataDir, { recursive: true, force: true }))

const platformRows = () =>
  t.core.db.$client.query("SELECT client_id FROM apps WHERE workspace_id = 'platform'").all()

/** The rows an earlier version wrote at every start, the console's with a secret that is not the current one. */
function writeEarlierRows(db: Database, owner: 'instance_id' | 'workspace_id') {
  const insert = db.query(`
    INSERT INTO apps (id, ${owner}, name, client_id, client_secret_hash, app_type, redirect_uris,
      post_logout_redirect_uris, dev_mode, extra_grants, created_at)
    VALUES ($id, 'platform', $name, $clientId, $hash, $type, '["https://old.example/cb"]', '[]', 0, '[]', 0)`)
  insert.run({
    id: 'app_platform_console',
    name: 'Gatehouse',
    clientId: 'gatehouse-console',
    hash: 'stale',
    type: 'web',
  })
  insert.run({
    id: 'app_platform_cli',
    name: 'Gatehouse CLI',
    clientId: 'gatehouse-cli',
    hash: null,
    type: 'native',
  })
}

async function clientsWork() {
  const client = platformClient(t.core)
  const token = await t.identity.fetch(PLATFORM, '/token', {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${btoa(`${client.clientId}:${client.clientSecret}`)}`,
    },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: 'not-a-code',
      redirect_uri: client.redirectUri,
      code_verifier: 'v'.repeat(43),
    }).toString(),
  })
  // The client authenticated: only the code is refused.
  expect(((await token.json()) as { error: string }).error).toBe('invalid_grant')
  const device = await t.identity.fetch(PLATFORM, '/device/auth', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: client.cliClientId, scope: 'openid' }).toString(),
  })
  expect(device.status).toBe(200)
}

describe("the platform instance's clients", () => {
  it('are not stored', async () => {
    expect(platformRows()).toEqual([])
    await clientsWork()
  })

  it('ignore the rows an earlier version stored', async () => {
    writeEarlierRows(t.core.db.$client, 'workspace_id')
    await clientsWork()
    t.core.db.$client.exec("DELETE FROM apps WHERE workspace_id = 'platform'")
  })

  it('are removed from an upgraded database by its migrations', () => {
    // A database as the version before this one left it: migrated up to the platform rows' removal.
    const db = new Database(':memory:')
    const migrations = embeddedMigrations()
    const removal = migrations.findIndex((m) => m.sql.join('').includes('DELETE FROM `apps`'))
    const run = (from: number, to: number) => {
      for (const m of migrations.slice(from, to)) for (const statement of m.sql) db.exec(statement)
    }
    run(0, removal)
    writeEarlierRows(db, 'instance_id')
    run(removal, migrations.length)
    expect(db.query("SELECT count(*) AS n FROM apps WHERE workspace_id = 'platform'").get()).toEqual({ n: 0 })
    db.close()
  })
})
