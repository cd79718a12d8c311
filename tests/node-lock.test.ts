import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { SQL } from 'bun'
import { PostgresStore } from '../src/db/postgres'
import { acquireNodeLock } from '../src/db/serve-lock'
import { createLogger } from '../src/shared/logger'
import { tempDir } from './support/core'
import { createTestDatabase, testStore } from './support/postgres'
import { startTestServer, type TestServer } from './support/server'
import { eventually } from './support/users'

// Issue 24, item 5: the node lock on PostgreSQL is an advisory lock on one connection, which may
// drop (an idle timeout on the way, a restarted pooler, pg_terminate_backend). The node checks it
// every `nodeLockCheckMs` (here 200 ms, in production NODE_LOCK_CHECK_MS): it takes the lock back on
// a new connection, or says it lost it to another process (a warning, and /healthz `degraded`).
const CHECK_MS = 200

describe.skipIf(testStore !== 'postgres')('the node lock (PostgreSQL leg)', () => {
  let server: TestServer
  let sql: SQL
  let key: string

  beforeAll(async () => {
    server = await startTestServer({}, undefined, { nodeLockCheckMs: CHECK_MS })
    sql = new SQL({ url: server.core.config.databaseUrl!, max: 3 })
    key = `gatehouse:node:${server.core.config.nodeId}`
  })
  afterAll(async () => {
    await server.stop()
    await sql.close()
  })

  /** The sessions holding, or waiting for, the node's advisory lock in the server's database. */
  const lockRows = async () =>
    (await sql.unsafe(
      `SELECT l.pid, l.granted, a.application_name
         FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended($1, 0)`,
      [key],
    )) as { pid: number; granted: boolean; application_name: string }[]
  const holder = async () => (await lockRows()).find((r) => r.granted) ?? null

  const healthz = async () => {
    const res = await fetch(`${server.baseUrl}/healthz`)
    return { status: res.status, body: (await res.json()) as Record<string, string> }
  }
  const logged = (msg: string) => server.logLines.filter((l) => String(l.msg).startsWith(msg))

  it('is taken back on a new connection within a check when its connection is ended', async () => {
    const before = await holder()
    expect(before?.application_name).toBe('gatehouse-lock')
    expect(await healthz()).toEqual({
      status: 200,
      body: { status: 'ok', version: '0.1.0', store: 'postgres', database: 'ok', node_lock: 'held' },
    })

    const killedAt = performance.now()
    await sql.unsafe('SELECT pg_terminate_backend($1)', [before!.pid])
    const after = await eventually(
      'the node to hold its lock on a new backend',
      async () => {
        const h = await holder()
        return h && h.pid !== before!.pid ? h : undefined
      },
      5000,
      10,
    )
    const tookMs = Math.round(performance.now() - killedAt)
    console.log(`node lock taken back on a new backend ${tookMs} ms after its backend was ended`)
    expect(tookMs).toBeLessThan(CHECK_MS * 5)
    expect(after.application_name).toBe('gatehouse-lock')
    expect((await healthz()).body).toMatchObject({ status: 'ok', node_lock: 'held' })
    await eventually('the log line', async () => logged('node lock taken back').length || undefined, 2000)
    expect(logged('node lock taken back')[0]).toMatchObject({
      level: 'info',
      node_id: server.core.config.nodeId,
    })
    expect(logged('node lock lost')).toEqual([])
  })

  it('is lost when another session took it meanwhile: /healthz 200 degraded and one warning, until it is free again', async () => {
    const before = await holder()
    // The rival waits for the lock first, so it gets it the moment the node's session ends.
    const rival = new SQL({ url: server.core.config.databaseUrl!, max: 1 })
    try {
      // then(): Bun's queries run once awaited.
      const grabbed = rival.unsafe('SELECT pg_advisory_lock(hashtextextended($1, 0))', [key]).then(() => {})
      await eventually('the rival to wait for the lock', async () =>
        (await lockRows()).some((r) => !r.granted) ? true : undefined,
      )
      const killedAt = performance.now()
      await sql.unsafe('SELECT pg_terminate_backend($1)', [before!.pid])
      await grabbed
      const lost = await eventually('/healthz to say the lock is lost', async () => {
        const h = await healthz()
        return h.body.node_lock === 'lost' ? h : undefined
      })
      const tookMs = Math.round(performance.now() - killedAt)
      console.log(`node lock loss noticed ${tookMs} ms after its backend was ended`)
      expect(tookMs).toBeLessThan(CHECK_MS * 5)
      // A degraded node still serves: 200, not 503 (the load balancer keeps it).
      expect(lost).toEqual({
        status: 200,
        body: { status: 'degraded', version: '0.1.0', store: 'postgres', database: 'ok', node_lock: 'lost' },
      })
      // One line, however many checks find it lost.
      await Bun.sleep(CHECK_MS * 3)
      const warned = logged('node lock lost')
      expect(warned).toHaveLength(1)
      expect(warned[0]).toMatchObject({ level: 'warn', node_id: server.core.config.nodeId })
      expect(String(warned[0]!.msg)).toContain('NODE_ID')
    } finally {
      await rival.close()
    }
    // The rival gone, the node takes its lock back.
    await eventually('the node to hold its lock again', async () => {
      const h = await healthz()
      return h.body.node_lock === 'held' ? h : undefined
    })
    expect((await healthz()).body.status).toBe('ok')
    expect((await holder())?.application_name).toBe('gatehouse-lock')
  })
})

describe.skipIf(testStore !== 'postgres')('a node starting (PostgreSQL leg)', () => {
  it('waits for a predecessor with its node id that is still stopping, and refuses one that stays', async () => {
    const url = await createTestDatabase()
    const store = new PostgresStore({ url, poolSize: 2 })
    // The predecessor's session, still holding the node id's lock for a moment after it stopped.
    const predecessor = new SQL({ url, max: 1 })
    const log = createLogger('error', () => {})
    const key = 'gatehouse:node:restarted'
    const session = await predecessor.reserve()
    try {
      await session.unsafe('SELECT pg_advisory_lock(hashtextextended($1, 0))', [key])
      const ended = Bun.sleep(400).then(() => session.unsafe('SELECT pg_advisory_unlock_all()'))
      const started = performance.now()
      const lock = await acquireNodeLock(store, tempDir(), 'restarted', { log, waitMs: 3000 })
      await ended
      expect(lock.state).toBe('held')
      expect(performance.now() - started).toBeGreaterThanOrEqual(350)
      await lock.release()

      // A live node keeps its lock: the next one is refused once the wait is over.
      await session.unsafe('SELECT pg_advisory_lock(hashtextextended($1, 0))', [key])
      await expect(acquireNodeLock(store, tempDir(), 'restarted', { log, waitMs: 300 })).rejects.toThrow(
        'node id "restarted" is in use by a running node on this database',
      )
    } finally {
      session.release()
      await predecessor.close()
      await store.close()
    }
  })
})
