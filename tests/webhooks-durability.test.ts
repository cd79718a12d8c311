import { afterAll, describe, expect, it } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import { loadConfig } from '../src/config'
import { createCore } from '../src/core'
import { webhookDeliveries, webhooks } from '../src/events/schema'
import { jobs } from '../src/queue/schema'
import { createLogger } from '../src/shared/logger'
import { until } from './support/cluster'
import { tempDir } from './support/core'
import { storeEnv } from './support/postgres'

// Issue 28, "Must hold": kill -9 during a delivery, restart: the event is delivered with the same
// id, and nothing is lost. A real `gatehouse serve` runs the deliveries (its worker thread, the
// system clock); this process emits the events through the same store and receives them.
const dataDir = tempDir()
const env: Record<string, string | undefined> = {
  ...process.env,
  DATA_DIR: dataDir,
  PORT: '0',
  LOG_LEVEL: 'warn',
  WEBHOOKS_ALLOW_HTTP: 'true',
  WEBHOOKS_ALLOW_PRIVATE: 'true',
  ...(await storeEnv(dataDir)),
}
delete env.JOB_LEASE_SECONDS
delete env.NODE_ID
const spawnServer = () =>
  Bun.spawn(['bun', join(import.meta.dir, '../src/main.ts'), 'serve'], {
    env,
    stdout: 'ignore',
    stderr: 'inherit',
  })

// The receiver: the first request of the first event never gets an answer (the node dies holding
// it); everything else is acknowledged.
const received: { id: string; at: number }[] = []
let held: string | null = null
const receiver = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  async fetch(req) {
    const id = req.headers.get('service-webhook-id') ?? ''
    received.push({ id, at: Date.now() })
    if (held === null) {
      held = id
      return new Promise<Response>(() => {})
    }
    return new Response('ok')
  },
})
let server = spawnServer()
afterAll(() => {
  server.kill('SIGKILL')
  receiver.stop(true)
})

describe('webhook deliveries across kill -9', () => {
  it('sends again, with the same event id, the delivery a killed node held; every event arrives', async () => {
    await until('the node id', () => existsSync(join(dataDir, 'node.id')))
    const core = createCore(loadConfig(env), { log: createLogger('error') })
    await until('the migrated store', () =>
      core.db
        .select()
        .from(jobs)
        .limit(1)
        .then(
          () => true,
          () => false,
        ),
    )
    const workspaceId = crypto.randomUUID()
    const now = Date.now()
    await core.db.insert(webhooks).values({
      id: 'wh_durability',
      workspaceId,
      url: `http://127.0.0.1:${receiver.port}/hook`,
      events: ['tenant.created'],
      enabled: true,
      secretSealed: core.secrets.seal('whsec_test', 'webhook:wh_durability'),
      createdAt: now,
      updatedAt: now,
    })
    const first = await core.emit('tenant.created', workspaceId, { name: 'first' }, { tenantId: 'ten_1' })
    await until('the first delivery to reach the receiver', () => held === first)

    server.kill('SIGKILL')
    await server.exited
    // Queued while the node is down: nothing may be lost either.
    const more: string[] = []
    for (let i = 0; i < 20; i++) more.push(await core.emit('tenant.created', workspaceId, { n: i }))

    server = spawnServer()
    const everyId = [first, ...more]
    await until(
      'every event delivered',
      async () => {
        const rows = await core.db
          .select()
          .from(webhookDeliveries)
          .where(eq(webhookDeliveries.webhookId, 'wh_durability'))
        return rows.length === everyId.length && rows.every((r) => r.status === 'delivered')
      },
      20_000,
    )
    const ids = received.map((r) => r.id)
    // The held one twice (its attempt died with the node), each other once; none missing.
    expect(ids.filter((id) => id === first)).toHaveLength(2)
    expect(new Set(ids)).toEqual(new Set(everyId))
    expect(ids).toHaveLength(everyId.length + 1)
    const [held1] = await core.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.eventId, first))
    expect(held1).toMatchObject({ status: 'delivered', attempts: 2, claimedBy: null })
    await core.store.close()
  }, 60_000)
})
