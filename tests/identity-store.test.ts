import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { chmodSync, existsSync, readFileSync, rmSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import * as oidc from 'openid-client'
import { dialect } from '../src/db/columns'
import { Agent } from './support/browserless'
import { tempDir } from './support/core'
import { activeWorkspace, pkceAuthorization, registerApp } from './support/instances'
import { freePort, startTestServer, type TestServer } from './support/server'
import { signUpEndUser, signUpUser } from './support/users'

// A copy of the database must not be a set of working credentials (issue 8, item 5): what the
// identity plane hands out is stored only as a keyed hash, and the files are private to the owner.
// The files (their bytes, their modes, a database from before PostgreSQL support) are SQLite's:
// those tests run on SQLite only; what the rows hold is checked on either store.
const onSqlite = dialect === 'sqlite'

const RP = 'https://rp.example.com'
const user = { email: 'mary@example.com', password: 'analytical engine', name: 'Mary Somerville' }

let root: string
let dataDir: string
let env: Record<string, string>
let server: TestServer
let ws: string
let spa: { clientId: string }
let wsBrowser: Agent
/** Every credential handed out during the flows below, by name. */
const handedOut: Record<string, string> = {}

const dbPath = () => join(dataDir, 'gatehouse.db')
const mode = (path: string) => statSync(path).mode & 0o777

const discover = (issuer: string, clientId: string) =>
  oidc.discovery(new URL(issuer), clientId, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] })

/** Every row of every table, as text. */
async function everyRow(): Promise<string> {
  if (!onSqlite) {
    const { store } = server.core
    const tables = await store.query<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
    )
    const rows = await Promise.all(tables.map((t) => store.query(`SELECT * FROM "${t.name}"`)))
    return rows.map((r) => JSON.stringify(r)).join('\n')
  }
  // The file itself, as a copy of it would be read (also while the server is stopped).
  const db = new Database(dbPath(), { readonly: true })
  try {
    const tables = db.query("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]
    return tables.map((t) => JSON.stringify(db.query(`SELECT * FROM "${t.name}"`).all())).join('\n')
  } finally {
    db.close()
  }
}

/** The bytes of the database and its write-ahead log (freed pages and old frames included). */
function rawBytes(): Buffer {
  const files = [dbPath(), `${dbPath()}-wal`].filter((f) => existsSync(f))
  return Buffer.concat(files.map((f) => readFileSync(f)))
}

async function expectNoneInRows(secrets: Record<string, string>) {
  const rows = await everyRow()
  for (const [name, value] of Object.entries(secrets)) {
    expect({ name, inRows: rows.includes(value) }).toEqual({ name, inRows: false })
  }
}

function expectNoneInFiles(secrets: Record<string, string>) {
  const bytes = rawBytes()
  for (const [name, value] of Object.entries(secrets)) {
    expect({ name, inFile: bytes.includes(value) }).toEqual({ name, inFile: false })
  }
}

/** Code + PKCE + offline_access at a workspace instance, then one refresh. */
async function workspaceFlow() {
  const issuer = `${server.baseUrl}/i/${ws}`
  const config = await discover(issuer, spa.clientId)
  const { url, verifier } = await pkceAuthorization(config, `${RP}/cb`)
  wsBrowser = new Agent(server.baseUrl)
  const back = await signUpEndUser(wsBrowser, url, user, RP)
  handedOut.code = back.searchParams.get('code')!
  const tokens = await oidc.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier })
  handedOut.accessToken = tokens.access_token
  handedOut.refreshToken = tokens.refresh_token!
  const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!)
  handedOut.refreshedAccessToken = refreshed.access_token
  handedOut.rotatedRefreshToken = refreshed.refresh_token!
  handedOut.instanceSession = wsBrowser.cookie('_session')!
  // The opaque access token (no resource: userinfo) is stored too; it must still work.
  const info = await oidc.fetchUserInfo(config, refreshed.access_token, tokens.claims()!.sub)
  expect(info.email).toBe(user.email)
}

/** The device flow at the platform instance, as the CLI runs it through the control plane. */
async function deviceFlow() {
  const dashboard = await signUpUser(server, { ...user, email: 'cli@example.com' })
  handedOut.dashboardSession = dashboard.agent.cookie('gh_session')!
  handedOut.platformSession = dashboard.agent.cookie('_session')!
  const started = (await (
    await fetch(`${server.baseUrl}/v1/auth/device/start`, { method: 'POST' })
  ).json()) as {
    device_code: string
    user_code: string
    verification_uri_complete: string
  }
  handedOut.deviceCode = started.device_code
  handedOut.userCode = started.user_code
  let page = await dashboard.agent.follow(started.verification_uri_complete)
  let html = await page.res.text()
  if (html.includes('Submitting Callback')) {
    page = await dashboard.agent.submit(html, page.url, '/device', {})
    html = await page.res.text()
  }
  const action = /<form\b[^>]*id="op.deviceConfirmForm"[^>]*action="([^"]*)"/.exec(html)?.[1]
  const approved = await dashboard.agent.submit(html, page.url, action ?? '/device/', {})
  expect(await approved.res.text()).toContain('Device connected')
  const poll = await fetch(`${server.baseUrl}/v1/auth/device/poll`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ device_code: started.device_code }),
  })
  const body = (await poll.json()) as { status: string; refresh_token: string; access_token: string }
  expect(body.status).toBe('complete')
  handedOut.cliRefreshToken = body.refresh_token
  const me = await fetch(`${server.baseUrl}/v1/auth/me`, {
    headers: { authorization: `Bearer ${body.access_token}` },
  })
  expect(me.status).toBe(200)
}

beforeAll(async () => {
  root = tempDir()
  // Not created yet: the server creates it.
  dataDir = join(root, 'data')
  const port = await freePort()
  env = { PORT: String(port), BASE_URL: `http://127.0.0.1:${port}` }
  server = await startTestServer(env, dataDir)
  ws = await activeWorkspace(server.core)
  spa = await registerApp(server.core, ws, { type: 'spa', redirectUris: [`${RP}/cb`] })
  await workspaceFlow()
  await deviceFlow()
})
afterAll(async () => {
  await server.stop()
  rmSync(root, { recursive: true, force: true })
})

describe('the identity store', () => {
  it('holds no code, token, session id or device code that was handed out', async () => {
    expect(Object.keys(handedOut).sort()).toEqual(
      [
        'accessToken',
        'cliRefreshToken',
        'code',
        'dashboardSession',
        'deviceCode',
        'instanceSession',
        'platformSession',
        'refreshToken',
        'refreshedAccessToken',
        'rotatedRefreshToken',
        'userCode',
      ].sort(),
    )
    for (const value of Object.values(handedOut)) expect(value.length).toBeGreaterThan(7)
    await expectNoneInRows(handedOut)
  })

  it.skipIf(!onSqlite)(
    'leaves none of them in the database files either (freed pages and WAL included)',
    () => {
      expectNoneInFiles(handedOut)
    },
  )

  it.skipIf(!onSqlite)('creates DATA_DIR 0700 and the database with its WAL and SHM files 0600', () => {
    expect(mode(dataDir)).toBe(0o700)
    for (const file of [dbPath(), `${dbPath()}-wal`, `${dbPath()}-shm`]) {
      expect({ file, mode: mode(file) }).toEqual({ file, mode: 0o600 })
    }
    expect(dirname(dbPath())).toBe(dataDir)
  })
})

// Only SQLite has databases from before this change (PostgreSQL support starts after it).
describe.skipIf(!onSqlite)('an upgraded database', () => {
  /** Rows as the adapter before this change wrote them: the raw id as key and `jti` in the payload. */
  async function writeLegacyRows() {
    const db = new Database(dbPath())
    // The stopped server's job workers may still be closing their connections.
    db.exec('PRAGMA busy_timeout = 5000')
    const legacy = (model: string, where: string, raw: string) => {
      const row = db
        .query(
          `SELECT id, payload FROM oidc_payloads WHERE instance_id = $ws AND model = $model AND ${where}`,
        )
        .get({ ws, model }) as { id: string; payload: string }
      const payload = { ...JSON.parse(row.payload), jti: raw }
      db.query(
        'UPDATE oidc_payloads SET id = $raw, payload = $payload WHERE instance_id = $ws AND model = $model AND id = $id',
      ).run({ raw, payload: JSON.stringify(payload), ws, model, id: row.id })
    }
    legacy('RefreshToken', 'consumed_at IS NULL', handedOut.rotatedRefreshToken!)
    legacy('Session', "payload LIKE '%accountId%'", handedOut.instanceSession!)
    // An older version never recorded the rewrite as done.
    db.exec('DELETE FROM upgrade_steps')
    db.close()
    expect(await everyRow()).toContain(handedOut.rotatedRefreshToken!)
    // A database file from before: readable by others.
    chmodSync(dbPath(), 0o644)
  }

  beforeAll(async () => {
    await server.stop()
    await writeLegacyRows()
    server = await startTestServer(env, dataDir)
  })

  it('is rehashed at start-up: the legacy refresh token and instance session still work', async () => {
    const issuer = `${server.baseUrl}/i/${ws}`
    const config = await discover(issuer, spa.clientId)
    const refreshed = await oidc.refreshTokenGrant(config, handedOut.rotatedRefreshToken!)
    expect(refreshed.refresh_token).toBeTruthy()
    const verifier = oidc.randomPKCECodeVerifier()
    const back = await wsBrowser.follow(
      oidc.buildAuthorizationUrl(config, {
        redirect_uri: `${RP}/cb`,
        scope: 'openid email',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      }),
      {},
      (u) => u.href.startsWith(RP),
    )
    expect(back.url.searchParams.get('code')).toBeTruthy()
    handedOut.lastCode = back.url.searchParams.get('code')!
    handedOut.lastRefreshToken = refreshed.refresh_token!
  })

  it('keeps no raw id of a rehashed row, and tightens the file mode', async () => {
    await expectNoneInRows(handedOut)
    expectNoneInFiles(handedOut)
    expect(mode(dbPath())).toBe(0o600)
  })
})
