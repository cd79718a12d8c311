import { afterAll, describe, expect, it } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import { loadConfig } from '../src/config'
import { createCore } from '../src/core'
import { jobs } from '../src/queue/schema'
import { createLogger } from '../src/shared/logger'
import { tempDir } from './support/core'
import { storeEnv } from './support/postgres'

// The default lease (60 s): a restart must not wait it out for the jobs its own earlier boot held.
const dataDir = tempDir()
const env: Record<string, string | undefined> = {
  ...process.env,
  DATA_DIR: dataDir,
  PORT: '0',
  LOG_LEVEL: 'warn',
  // The leg's store: on PostgreSQL a database of this file's own (and its SECRET_KEY).
  ...(await storeEnv(dataDir)),
}
delete env.JOB_LEASE_SECONDS
delete env.NODE_ID
const journal = () => {
  const file = join(dataDir, 'jobs.log')
  return existsSync(file) ? readFileSync(file, 'utf8') : ''
}
const until = async (what: string, check: () => boolean | Promise<boolean>, ms = 20_000) => {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(50)
  }
}
const spawnServer = () =>
  Bun.spawn(['bun', join(import.meta.dir, 'fixtures/serve-with-test-jobs.ts')], {
    env,
    stdout: 'ignore',
    stderr: 'inherit',
  })

let server = spawnServer()
afterAll(() => server.kill('SIGKILL'))

describe('durable jobs across kill -9', () => {
  it('re-runs at once the job its earlier boot held, loses nothing queued, and leaves other nodes alone', async () => {
    // The server creates and migrates the store (and writes its node id once serving); this process
    // enqueues through the same code.
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
    const row = async (id: string) => (await core.db.select().from(jobs).where(eq(jobs.id, id)))[0]!
    const nodeId = readFileSync(join(dataDir, 'node.id'), 'utf8').trim()
    const running = await core.jobs.enqueue('test.journal', { ms: 1500 })
    await until('the long job to start', () => journal().includes(`start ${running} 1`))
    const firstClaim = (await row(running)).lockedBy ?? ''
    expect(firstClaim).toMatch(new RegExp(`^${nodeId}:[^:]+:[^:]+$`))
    const queued: string[] = []
    for (let i = 0; i < 20; i++) {
      queued.push(await core.jobs.enqueue('test.journal', { ms: 10 }, { runAt: Date.now() + 60_000 + i }))
    }

    server.kill('SIGKILL')
    await server.exited
    expect(journal()).not.toContain(`done ${running}`)

    // A job another node holds (a live lease on a shared store) must not be taken at start.
    const foreign = await core.jobs.enqueue('test.journal', { ms: 10 }, { runAt: Date.now() + 3_600_000 })
    const foreignLease = Date.now() + 60_000
    await core.db
      .update(jobs)
      .set({ status: 'running', attempts: 1, lockedBy: 'node-elsewhere:boot1:w0', leaseUntil: foreignLease })
      .where(eq(jobs.id, foreign))

    // Make the queued jobs due, then restart with the same DATA_DIR.
    await core.db.update(jobs).set({ runAt: Date.now() }).where(eq(jobs.status, 'queued'))
    const restartedAt = Date.now()
    server = spawnServer()
    const ours = [running, ...queued]
    await until(
      'every job of this node to finish',
      async () => (await Promise.all(ours.map(row))).every((r) => r.status === 'done'),
      15_000,
    )
    const tookMs = Date.now() - restartedAt
    expect(tookMs).toBeLessThan(10_000)

    const log = journal()
    expect(log).toContain(`start ${running} 2`)
    expect(log).toContain(`done ${running} 2`)
    for (const id of queued) expect(log).toContain(`done ${id} 1`)
    const secondClaim = (await row(running)).lockedBy ?? ''
    expect(secondClaim).toMatch(new RegExp(`^${nodeId}:[^:]+:[^:]+$`))
    expect(secondClaim.split(':')[1]).not.toBe(firstClaim.split(':')[1])

    expect(await row(foreign)).toMatchObject({
      status: 'running',
      attempts: 1,
      lockedBy: 'node-elsewhere:boot1:w0',
      leaseUntil: foreignLease,
    })
    expect(journal()).not.toContain(foreign)
    // The periodic purge adds its own rows; these are the test's (21, and the other node's one).
    expect(await core.db.select().from(jobs).where(eq(jobs.kind, 'test.journal'))).toHaveLength(22)
    await core.store.close()
  }, 60_000)
})
