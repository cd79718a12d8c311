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

const platformRows = () => t.core.store.query("SELECT client_id FROM apps WHERE workspace_id = 'platform'")

/** Runs one statement with `$1…$n` parameters. */
type Exec = (text: string, params: unknown[]) => unknown

/** The rows an earlier version wrote at every start, the console's with a secret that is not the current one. */
async function writeEarlierRows(exec: Exec, owner: 'instance_id' | 'workspace_id') {
  const insert = `
    INSERT INTO apps (id, ${owner}, name, client_id, client_secret_hash, app_type, redirect_uris,
      post_logout_redirect_uris, dev_mode, extra_grants, created_at)
    VALUES ($1, 'platform', $2, $3, $4, $5, '["https://old.example/cb"]', '[]', false, '[]', 0)`
  await exec(insert, ['app_platform_console', 'Gatehouse', 'gatehouse-console', 'stale', 'web'])
  await exec(insert, ['app_platform_cli', 'Gatehouse CLI', 'gatehouse-cli', null, 'native'])
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
    expect(await platformRows()).toEqual([])
    await clientsWork()
  })

  it('ignore the rows an earlier version stored', async () => {
    await writeEarlierRows((text, params) => t.core.store.exec(text, params), 'workspace_id')
    await clientsWork()
    await t.core.store.exec("DELETE FROM apps WHERE workspace_id = 'platform'")
  })

  it('are removed from an upgraded database by its migrations', async () => {
    // A database as the version before this one left it: migrated up to the platform rows' removal.
    // Only SQLite has that history (PostgreSQL support starts after it), so this runs on SQLite whatever
    // the store under test is.
    const db = new Database(':memory:')
    const migrations = embeddedMigrations().sqlite
    const removal = migrations.findIndex((m) => m.sql.join('').includes('DELETE FROM `apps`'))
    const run = (from: number, to: number) => {
      for (const m of migrations.slice(from, to)) for (const statement of m.sql) db.exec(statement)
    }
    run(0, removal)
    await writeEarlierRows(
      (text, params) => db.query(text.replace(/\$(\d+)/g, '?$1')).run(...(params as never[])),
      'instance_id',
    )
    run(removal, migrations.length)
    expect(db.query("SELECT count(*) AS n FROM apps WHERE workspace_id = 'platform'").get()).toEqual({ n: 0 })
    db.close()
  })
})
