import { Database } from 'bun:sqlite'
import { afterAll, describe, expect, it } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { connect, createServer, type Socket } from 'node:net'
import { join } from 'node:path'
import { SQL, type Subprocess } from 'bun'
import { createRemoteJWKSet, jwtVerify } from 'jose'
import { runCli } from './support/cli'
import { tempDir } from './support/core'
import { clientCredentials } from './support/instances'
import { createTestDatabase, testStore } from './support/postgres'
import { freePort, type TestServer } from './support/server'
import { eventually, json, type PlatformUser, signUpUser, waitForState } from './support/users'

// Issue 19 on a real PostgreSQL: `store copy` from a SQLite install, a database that goes away and
// comes back, several nodes migrating one empty database at once, and the node-id lock. Every
// server here is a real `gatehouse serve` process with its own environment.

const root = join(import.meta.dir, '..')
const hex = (bytes: number) => randomBytes(bytes).toString('hex')

/** The environment every child starts from: never the leg's DATABASE_URL. */
const baseEnv = (): Record<string, string> => ({
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '',
  HOST: '127.0.0.1',
  LOG_LEVEL: 'warn',
})

/** Runs `bun src/main.ts …` to the end; what an operator would see. */
const cli = (args: string[], env: Record<string, string>) => runCli(args, { ...baseEnv(), ...env })

interface Node {
  url: string
  proc: Subprocess<'ignore', 'pipe', 'pipe'>
  /** What the process wrote so far (stdout and stderr). */
  output(): string
  /** SIGTERM, then its exit code. */
  stop(): Promise<number>
}

const nodes = new Set<Node>()

async function collect(stream: ReadableStream<Uint8Array>, into: string[]) {
  const decoder = new TextDecoder()
  const reader = stream.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return
    into.push(decoder.decode(value, { stream: true }))
  }
}

/** Starts `gatehouse serve` and resolves once its /healthz answers 200 (or throws with its output). */
async function serve(env: Record<string, string>, port?: number): Promise<Node> {
  const p = port ?? (await freePort())
  const url = `http://127.0.0.1:${p}`
  const proc = Bun.spawn([process.execPath, 'src/main.ts', 'serve'], {
    cwd: root,
    env: { ...baseEnv(), LOG_LEVEL: 'info', PORT: String(p), BASE_URL: url, ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const out: string[] = []
  void collect(proc.stdout, out)
  void collect(proc.stderr, out)
  const node: Node = {
    url,
    proc,
    output: () => out.join(''),
    async stop() {
      nodes.delete(node)
      if (proc.exitCode === null) proc.kill('SIGTERM')
      return proc.exited
    },
  }
  nodes.add(node)
  // Up once it logged "listening": /healthz answers a little earlier, while the job workers start
  // and before `serve` handles SIGTERM.
  await eventually(
    `gatehouse serve on ${url} to be listening`,
    async () => {
      if (proc.exitCode !== null) return 'exited'
      if (!node.output().includes('"msg":"listening"')) return undefined
      return (await fetch(`${url}/healthz`)).status === 200 ? 'up' : undefined
    },
    30_000,
    50,
  )
  if (proc.exitCode !== null) {
    await proc.exited
    throw new Error(`gatehouse serve exited with ${proc.exitCode}:\n${node.output()}`)
  }
  return node
}

afterAll(async () => {
  await Promise.all([...nodes].map((n) => n.stop()))
})

/** Stops a node with SIGTERM and expects the clean shutdown's exit 0 (its output shown when not). */
async function stopCleanly(node: Node) {
  const code = await node.stop()
  expect({ code, output: code === 0 ? '' : node.output() }).toEqual({ code: 0, output: '' })
}

/** What the user helpers need of a server: only where it answers. */
const at = (baseUrl: string) => ({ baseUrl }) as TestServer

async function healthz(url: string) {
  const res = await fetch(`${url}/healthz`)
  return { status: res.status, body: (await res.json()) as Record<string, string> }
}

async function bearerGet(url: string, bearer: string, path: string) {
  const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${bearer}` } })
  return { status: res.status, body: await res.json() }
}

/** A value as both stores hand it over: PostgreSQL's booleans are SQLite's 0/1. */
const canonical = (value: unknown) => (typeof value === 'boolean' ? Number(value) : value)
const canonicalRows = (rows: Record<string, unknown>[]) =>
  rows
    .map((row) =>
      JSON.stringify(
        Object.keys(row)
          .sort()
          .map((k) => [k, canonical(row[k])]),
      ),
    )
    .sort()

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`

const postgresMigrations = (
  JSON.parse(readFileSync(join(root, 'db/migrations/postgres/meta/_journal.json'), 'utf8')) as {
    entries: { tag: string }[]
  }
).entries

describe.skipIf(testStore !== 'postgres')('the PostgreSQL store (PostgreSQL leg)', () => {
  const adminBase = process.env.TEST_PG_ADMIN_URL ?? ''
  let adminSql: SQL | null = null
  /** The cluster's maintenance database, for CREATE/ALTER DATABASE and pg_terminate_backend. */
  const admin = () => {
    adminSql ??= new SQL({ url: `${adminBase}/postgres`, max: 1 })
    return adminSql
  }
  const connections: SQL[] = []
  /** A connection to one database of the cluster, closed after the file. */
  const open = (url: string) => {
    const sql = new SQL({ url, max: 2 })
    connections.push(sql)
    return sql
  }
  afterAll(async () => {
    for (const sql of connections) await sql.close()
    await adminSql?.close()
  })

  const dbName = (url: string) => new URL(url).pathname.slice(1)

  async function publicTables(sql: SQL): Promise<string[]> {
    const rows = (await sql.unsafe(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
    )) as { table_name: string }[]
    return rows.map((r) => r.table_name)
  }

  async function rowCounts(sql: SQL): Promise<Record<string, number>> {
    const counts: Record<string, number> = {}
    for (const table of await publicTables(sql)) {
      const [row] = (await sql.unsafe(`SELECT count(*) AS n FROM ${quote(table)}`)) as {
        n: number | string
      }[]
      counts[table] = Number(row?.n)
    }
    return counts
  }

  /** A database with nothing in it, not even the migrations (not a copy of the leg's template). */
  async function emptyDatabase(): Promise<string> {
    const name = `t_empty_${hex(6)}`
    await admin().unsafe(`CREATE DATABASE ${name}`)
    return `${adminBase}/${name}`
  }

  describe('gatehouse store copy', () => {
    it('copies a stopped SQLite store with workspaces, apps, sessions and queued jobs; a server on the copy serves them; a non-empty target is refused', async () => {
      const secretKey = hex(32)
      const sqliteDir = tempDir()
      // The copy is served on the same address, as a moved install would be (same issuers).
      const port = await freePort()
      const sqliteNode = await serve(
        { DATA_DIR: sqliteDir, SECRET_KEY: secretKey, NODE_ID: 'copy-from' },
        port,
      )
      const url = sqliteNode.url
      expect(await healthz(url)).toEqual({
        status: 200,
        body: expect.objectContaining({ store: 'sqlite', database: 'ok' }),
      })

      const owner: PlatformUser = await signUpUser(
        at(url),
        { email: 'mover@example.com', password: 'mover-password-1', name: 'Mover' },
        { bearer: true },
      )
      const workspaces: { id: string; auth_url: string }[] = []
      for (const name of ['Moved One', 'Moved Two']) {
        const created = await json(owner.agent, 'POST', '/v1/workspaces', { name })
        expect(created.status).toBe(201)
        workspaces.push((await waitForState(owner.agent, created.body.id, 'active')) as never)
      }
      const ws = workspaces[0]!
      const created = await json(owner.agent, 'POST', `/v1/workspaces/${ws.id}/apps`, {
        name: 'Moved web app',
        redirect_uris: ['https://rp.example.com/cb'],
      })
      expect(created.status).toBe(201)
      const app = created.body as { client_id: string; client_secret: string; issuer: string }
      expect(app.client_secret).toBeString()
      expect(app.issuer).toBe(ws.auth_url)
      expect((await clientCredentials(app.issuer, app.client_id, app.client_secret)).status).toBe(200)
      const jwksBefore = await (await fetch(`${app.issuer}/jwks`)).json()
      const listBefore = await bearerGet(url, owner.bearer!, '/v1/workspaces')
      expect(listBefore.status).toBe(200)
      expect(listBefore.body.total).toBe(2)

      // While the SQLite server runs, its store is not copied: the target is left untouched.
      const target = await createTestDatabase()
      const targetSql = open(target)
      const busy = await cli(['store', 'copy', '--to', target], {
        DATA_DIR: sqliteDir,
        SECRET_KEY: secretKey,
      })
      expect(busy).toEqual({
        code: 2,
        stdout: '',
        stderr: `gatehouse: another gatehouse process is already serving ${sqliteDir}: stop it before copying its store\n`,
      })
      expect(Object.values(await rowCounts(targetSql)).every((n) => n === 0)).toBe(true)

      await stopCleanly(sqliteNode)

      // Jobs still queued when the install stops: due in an hour, so nothing runs them meanwhile.
      const sqlitePath = join(sqliteDir, 'gatehouse.db')
      const queued = [`job_${hex(8)}`, `job_${hex(8)}`, `job_${hex(8)}`]
      {
        const db = new Database(sqlitePath, { strict: true })
        const now = Date.now()
        const insert = db.query(
          `INSERT INTO jobs (id, kind, payload, workspace_id, status, run_at, attempts, max_attempts, created_at, updated_at)
           VALUES ($id, 'test.moved', $payload, $ws, 'queued', $runAt, 0, 10, $now, $now)`,
        )
        for (const id of queued) {
          insert.run({ id, payload: JSON.stringify({ id }), ws: ws.id, runAt: now + 3_600_000, now })
        }
        db.close()
      }

      const copy = await cli(['store', 'copy', '--to', target], { DATA_DIR: sqliteDir })
      expect({ code: copy.code, stderr: copy.stderr }).toEqual({ code: 0, stderr: '' })
      const lines = copy.stdout.split('\n')
      expect(lines[0]).toBe(`copying ${sqlitePath} into PostgreSQL`)
      const jobCount = countIn(sqlitePath, 'jobs')
      expect(lines).toContain(`copying jobs: ${jobCount}/${jobCount}`)

      // The per-table counts it prints: every table of the SQLite store, the same on both sides.
      const sqliteDb = new Database(sqlitePath, { readonly: true })
      const sqliteTables = (
        sqliteDb
          .query(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '__drizzle%' ORDER BY name",
          )
          .all() as { name: string }[]
      ).map((r) => r.name)
      const header = lines.findIndex((l) => /^table\s+sqlite\s+postgres$/.test(l))
      expect(header).toBeGreaterThan(0)
      const printed: Record<string, [number, number]> = {}
      for (const line of lines.slice(header + 1)) {
        const m = /^(\S+)\s+(\d+)\s+(\d+)$/.exec(line)
        if (m) printed[m[1]!] = [Number(m[2]), Number(m[3])]
      }
      expect(Object.keys(printed).sort()).toEqual(sqliteTables)
      expect(lines.some((l) => l.includes('MISMATCH'))).toBe(false)
      const pgCounts = await rowCounts(targetSql)
      for (const table of sqliteTables) {
        const n = (sqliteDb.query(`SELECT count(*) AS n FROM ${quote(table)}`).get() as { n: number }).n
        expect({ table, printed: printed[table], actual: pgCounts[table] }).toEqual({
          table,
          printed: [n, n],
          actual: n,
        })
      }
      for (const table of ['workspaces', 'apps', 'jobs']) expect(printed[table]?.[0]).toBeGreaterThan(0)
      expect(lines.at(-2)).toStartWith('copy complete.')

      // Not only as many rows: the same values, row by row, in every table.
      for (const table of sqliteTables) {
        const from = sqliteDb.query(`SELECT * FROM ${quote(table)}`).all() as Record<string, unknown>[]
        const to = (await targetSql.unsafe(`SELECT * FROM ${quote(table)}`)) as Record<string, unknown>[]
        expect({ table, rows: canonicalRows(to) }).toEqual({ table, rows: canonicalRows(from) })
      }
      sqliteDb.close()

      // A server on the copy: the same master key, a new DATA_DIR (nothing of the old one).
      const pgNode = await serve(
        { DATABASE_URL: target, SECRET_KEY: secretKey, DATA_DIR: tempDir(), NODE_ID: 'copy-to' },
        port,
      )
      expect(await healthz(url)).toEqual({
        status: 200,
        body: expect.objectContaining({ store: 'postgres', database: 'ok' }),
      })
      // The existing app's secret still opens its client credentials, signed with the copied keys.
      const cc = await clientCredentials(app.issuer, app.client_id, app.client_secret)
      expect(cc.status).toBe(200)
      const token = (await cc.json()) as { access_token: string; token_type: string }
      expect(token.token_type.toLowerCase()).toBe('bearer')
      expect(await (await fetch(`${app.issuer}/jwks`)).json()).toEqual(jwksBefore)
      if (token.access_token.split('.').length === 3) {
        await jwtVerify(token.access_token, createRemoteJWKSet(new URL(`${app.issuer}/jwks`)), {
          issuer: app.issuer,
        })
      }
      // The dashboard session cookie signed in on SQLite is still signed in.
      const me = await owner.agent.request('/v1/auth/me', { headers: { accept: 'application/json' } })
      expect(me.status).toBe(200)
      expect(((await me.json()) as { id: string }).id).toBe(owner.id)
      const dashboard = await owner.agent.request('/app/')
      expect(dashboard.status).toBe(200)
      const page = await dashboard.text()
      expect(page).toContain('Welcome, Mover')
      for (const w of ['Moved One', 'Moved Two']) expect(page).toContain(w)
      // The CLI's bearer token too; the workspaces read the same.
      expect(await bearerGet(url, owner.bearer!, '/v1/workspaces')).toEqual(listBefore)
      // The queued jobs are still queued, due when they were.
      const jobs = (await targetSql.unsafe(
        'SELECT id, status, kind FROM jobs WHERE id IN ($1, $2, $3) ORDER BY id',
        [...queued],
      )) as { id: string; status: string; kind: string }[]
      expect(jobs).toEqual(queued.toSorted().map((id) => ({ id, status: 'queued', kind: 'test.moved' })))
      await stopCleanly(pgNode)

      // A second copy into the now non-empty database is refused with one line; nothing changes.
      const filled = await rowCounts(targetSql)
      const again = await cli(['store', 'copy', '--to', target], { DATA_DIR: sqliteDir })
      expect(again.code).toBe(2)
      expect(again.stderr).toMatch(
        /^gatehouse: the target database is not empty \(rows in [a-z_, ]+\): copy into an empty one\n$/,
      )
      expect(await rowCounts(targetSql)).toEqual(filled)

      // A database holding someone else's tables is refused before anything is created in it.
      const foreignName = `foreign_${randomBytes(4).toString('hex')}`
      await admin().unsafe(`CREATE DATABASE ${foreignName}`)
      const foreignUrl = `${adminBase}/${foreignName}`
      const foreignSql = open(foreignUrl)
      await foreignSql.unsafe('CREATE TABLE invoices (id integer)')
      const refused = await cli(['store', 'copy', '--to', foreignUrl], { DATA_DIR: sqliteDir })
      expect(refused.code).toBe(2)
      expect(refused.stderr).toBe(
        'gatehouse: the target database holds other tables (invoices): copy into an empty one\n',
      )
      expect(await publicTables(foreignSql)).toEqual(['invoices'])
    }, 120_000)
  })

  describe('a lost database', () => {
    interface Outage {
      /** The DATABASE_URL the node is given. */
      url: string
      cut(): Promise<void>
      restore(): Promise<void>
      close?(): void
    }

    /** PostgreSQL turns the database's connections away: its backends end, new ones are refused. */
    async function refusedByPostgres(): Promise<Outage> {
      const url = await createTestDatabase()
      const name = dbName(url)
      return {
        url,
        async cut() {
          await admin().unsafe(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`)
          await admin().unsafe('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [
            name,
          ])
        },
        async restore() {
          await admin().unsafe(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`)
        },
      }
    }

    /**
     * The database host goes away: the node reaches PostgreSQL through a TCP relay that, when cut,
     * drops every connection and stops listening (connection refused), as a stopped server would.
     */
    async function hostGone(): Promise<Outage> {
      const database = new URL(await createTestDatabase())
      const upstreamPort = Number(database.port)
      const sockets = new Set<Socket>()
      const relay = createServer((client) => {
        const upstream = connect(upstreamPort, '127.0.0.1')
        for (const s of [client, upstream]) sockets.add(s)
        const drop = () => {
          for (const s of [client, upstream]) {
            s.destroy()
            sockets.delete(s)
          }
        }
        client.on('error', drop).on('close', drop)
        upstream.on('error', drop).on('close', drop)
        client.pipe(upstream)
        upstream.pipe(client)
      })
      const port = await freePort()
      const listen = () => new Promise<void>((resolve) => relay.listen(port, '127.0.0.1', resolve))
      await listen()
      database.port = String(port)
      return {
        url: database.href,
        async cut() {
          const closed = new Promise((resolve) => relay.close(resolve))
          for (const s of sockets) s.destroy()
          sockets.clear()
          await closed
        },
        restore: listen,
        close() {
          for (const s of sockets) s.destroy()
          relay.close()
        },
      }
    }

    const cases: [string, () => Promise<Outage>][] = [
      [
        'PostgreSQL refuses the database (ALLOW_CONNECTIONS false, its backends terminated)',
        refusedByPostgres,
      ],
      ['the database host is gone (connections dropped, new ones refused)', hostGone],
    ]
    for (const [what, make] of cases) {
      it(`${what}: 503 (JSON on the API, a page on the dashboard, /healthz unavailable), no crash, recovers by itself`, async () => {
        const outage = await make()
        try {
          const node = await serve({
            DATABASE_URL: outage.url,
            SECRET_KEY: hex(32),
            DATA_DIR: tempDir(),
            NODE_ID: 'lost-db',
          })
          const user = await signUpUser(at(node.url), {
            email: 'outage@example.com',
            password: 'outage-password-1',
            name: 'Outage',
          })
          const api = () => user.agent.request('/v1/auth/me', { headers: { accept: 'application/json' } })
          const dashboard = () => user.agent.request('/app/')
          expect((await api()).status).toBe(200)
          expect((await dashboard()).status).toBe(200)

          await outage.cut()
          try {
            // Every request while it is gone: 503, never a 500, never a stack. The first ones meet
            // the pool's dropped connections, the later ones a refused dial.
            for (let i = 0; i < 4; i++) {
              const res = await api()
              const text = await res.text()
              expect({ i, status: res.status, type: res.headers.get('content-type') }).toEqual({
                i,
                status: 503,
                type: expect.stringContaining('application/json'),
              })
              const body = JSON.parse(text) as Record<string, unknown>
              expect(Object.keys(body)).toEqual(['detail'])
              expect(body.detail).toBeString()
              expect(text).not.toMatch(/ at |\.ts|postgres|ERR_/i)
            }
            const page = await dashboard()
            const html = await page.text()
            expect({ status: page.status, type: page.headers.get('content-type') }).toEqual({
              status: 503,
              type: expect.stringContaining('text/html'),
            })
            expect(html).toContain('<html')
            expect(html).toContain('temporarily unavailable')
            expect(html).not.toMatch(/ at |\.ts:|ERR_POSTGRES|stack/i)
            expect(await healthz(node.url)).toEqual({
              status: 503,
              body: expect.objectContaining({
                status: 'degraded',
                store: 'postgres',
                database: 'unavailable',
              }),
            })
            // The identity plane too: an instance not in memory needs the store to be found.
            const instance = await fetch(
              `${node.url}/i/${crypto.randomUUID()}/.well-known/openid-configuration`,
              {
                headers: { accept: 'application/json' },
              },
            )
            expect({ status: instance.status, body: await instance.json() }).toEqual({
              status: 503,
              body: { detail: expect.stringContaining('temporarily unavailable') },
            })
            expect(node.proc.exitCode).toBeNull()
            // Not a bug to log as one: no "unhandled error" with a stack for an unreachable database.
            expect(node.output()).not.toContain('"unhandled error"')
          } finally {
            await outage.restore()
          }

          // Back by itself: no restart, the same session.
          await eventually(
            '/healthz to say the database is ok again',
            async () => {
              const h = await healthz(node.url)
              return h.status === 200 && h.body.database === 'ok' ? h : undefined
            },
            20_000,
            100,
          )
          await eventually('the API to answer again', async () =>
            (await api()).status === 200 ? true : undefined,
          )
          const me = await api()
          expect(me.status).toBe(200)
          expect(((await me.json()) as { id: string }).id).toBe(user.id)
          expect((await dashboard()).status).toBe(200)
          expect(node.proc.exitCode).toBeNull()
          await stopCleanly(node)
        } finally {
          outage.close?.()
        }
      }, 90_000)
    }
  })

  describe('several nodes starting on one empty database', () => {
    async function appliedMigrations(url: string) {
      const sql = open(url)
      return (await sql.unsafe('SELECT hash FROM drizzle.__drizzle_migrations')) as { hash: string }[]
    }

    it('gatehouse migrate ×3 at once: all exit 0, each migration applied once', async () => {
      const database = await emptyDatabase()
      const secretKey = hex(32)
      const runs = await Promise.all(
        [1, 2, 3].map(() =>
          cli(['migrate'], { DATABASE_URL: database, SECRET_KEY: secretKey, DATA_DIR: tempDir() }),
        ),
      )
      for (const run of runs) {
        expect(run).toEqual({
          code: 0,
          stderr: '',
          stdout: `migrations applied (${postgresMigrations.length} known) to PostgreSQL\n`,
        })
      }
      const applied = await appliedMigrations(database)
      expect(applied).toHaveLength(postgresMigrations.length)
      expect(new Set(applied.map((r) => r.hash)).size).toBe(postgresMigrations.length)
      // The same tables as a database migrated once (a copy of the leg's template).
      expect(await publicTables(open(database))).toEqual(await publicTables(open(await createTestDatabase())))
    }, 60_000)

    it('gatehouse serve ×3 at once: all serve, migrations applied once, one platform key set', async () => {
      const database = await emptyDatabase()
      const secretKey = hex(32)
      const started = await Promise.all(
        ['start-a', 'start-b', 'start-c'].map((id) =>
          serve({ DATABASE_URL: database, SECRET_KEY: secretKey, DATA_DIR: tempDir(), NODE_ID: id }),
        ),
      )
      for (const node of started) {
        expect(await healthz(node.url)).toEqual({
          status: 200,
          body: expect.objectContaining({ store: 'postgres', database: 'ok' }),
        })
      }
      const applied = await appliedMigrations(database)
      expect(applied).toHaveLength(postgresMigrations.length)
      // The nodes agree on what they created at first start: the platform issuer's keys.
      const jwks = await Promise.all(
        started.map(async (n) => (await fetch(`${n.url}/i/platform/jwks`)).json()),
      )
      expect(jwks[0].keys.length).toBeGreaterThan(0)
      expect(jwks[1]).toEqual(jwks[0])
      expect(jwks[2]).toEqual(jwks[0])
      for (const node of started) await stopCleanly(node)
    }, 90_000)
  })

  describe('NODE_ID on one database', () => {
    it('refuses a second live process with the same node id (one line, exit 2), and takes it once the first stopped', async () => {
      const database = await createTestDatabase()
      const secretKey = hex(32)
      const env = () => ({
        DATABASE_URL: database,
        SECRET_KEY: secretKey,
        DATA_DIR: tempDir(),
        NODE_ID: 'twin',
      })
      const first = await serve(env())
      const second = await cli(['serve'], { ...env(), PORT: String(await freePort()) })
      expect(second).toEqual({
        code: 2,
        stdout: '',
        stderr:
          'gatehouse: node id "twin" is in use by a running node on this database: give each node its own NODE_ID\n',
      })
      expect((await healthz(first.url)).status).toBe(200)
      // Another node id on the same database is welcome.
      const other = await serve({ ...env(), NODE_ID: 'twin-2' })
      expect((await healthz(other.url)).status).toBe(200)
      await stopCleanly(first)
      const again = await serve(env())
      expect((await healthz(again.url)).status).toBe(200)
      await stopCleanly(again)
      await stopCleanly(other)
    }, 90_000)
  })
})

/** Rows in a table of a SQLite store (opened read-only for the count). */
function countIn(path: string, table: string): number {
  const db = new Database(path, { readonly: true })
  try {
    return (db.query(`SELECT count(*) AS n FROM ${quote(table)}`).get() as { n: number }).n
  } finally {
    db.close()
  }
}
