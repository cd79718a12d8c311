import { afterAll, describe, expect, it } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import { loadConfig } from '../src/config'
import { createCore } from '../src/core'
import { jobs } from '../src/queue/schema'
import { createLogger } from '../src/shared/logger'
import { tempDir } from './support/core'

// The default lease (60 s): a restart must not wait it out for the jobs its own earlier boot held.
const dataDir = tempDir()
const env: Record<string, string | undefined> = {
  ...process.env,
  DATA_DIR: dataDir,
  PORT: '0',
  LOG_LEVEL: 'warn',
}
delete env.JOB_LEASE_SECONDS
delete env.NODE_ID
const journal = () => {
  const file = join(dataDir, 'jobs.log')
  return existsSync(file) ? readFileSync(file, 'utf8') : ''
}
const until = async (what: string, check: () => boolean, ms = 20_000) => {
  const deadline = Date.now() + ms
  while (!check()) {
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
    // The server creates and migrates the store; this process enqueues through the same code.
    await until('the store', () => existsSync(join(dataDir, 'gatehouse.db')))
    await Bun.sleep(300)
    const core = createCore(loadConfig(env), { log: createLogger('error') })
    const row = (id: string) => core.db.select().from(jobs).where(eq(jobs.id, id)).get()!
    const nodeId = readFileSync(join(dataDir, 'node.id'), 'utf8').trim()
    const running = core.jobs.enqueue('test.journal', { ms: 1500 })
    await until('the long job to start', () => journal().includes(`start ${running} 1`))
    const firstClaim = row(running).lockedBy ?? ''
    expect(firstClaim).toMatch(new RegExp(`^${nodeId}:[^:]+:[^:]+$`))
    const queued = Array.from({ length: 20 }, (_, i) =>
      core.jobs.enqueue('test.journal', { ms: 10 }, { runAt: Date.now() + 60_000 + i }),
    )

    server.kill('SIGKILL')
    await server.exited
    expect(journal()).not.toContain(`done ${running}`)

    // A job another node holds (a live lease on a shared store) must not be taken at start.
    const foreign = core.jobs.enqueue('test.journal', { ms: 10 }, { runAt: Date.now() + 3_600_000 })
    const foreignLease = Date.now() + 60_000
    core.db
      .update(jobs)
      .set({ status: 'running', attempts: 1, lockedBy: 'node-elsewhere:boot1:w0', leaseUntil: foreignLease })
      .where(eq(jobs.id, foreign))
      .run()

    // Make the queued jobs due, then restart with the same DATA_DIR.
    core.db.update(jobs).set({ runAt: Date.now() }).where(eq(jobs.status, 'queued')).run()
    const restartedAt = Date.now()
    server = spawnServer()
    const ours = [running, ...queued]
    await until(
      'every job of this node to finish',
      () => ours.every((id) => row(id).status === 'done'),
      15_000,
    )
    const tookMs = Date.now() - restartedAt
    expect(tookMs).toBeLessThan(10_000)

    const log = journal()
    expect(log).toContain(`start ${running} 2`)
    expect(log).toContain(`done ${running} 2`)
    for (const id of queued) expect(log).toContain(`done ${id} 1`)
    const secondClaim = row(running).lockedBy ?? ''
    expect(secondClaim).toMatch(new RegExp(`^${nodeId}:[^:]+:[^:]+$`))
    expect(secondClaim.split(':')[1]).not.toBe(firstClaim.split(':')[1])

    expect(row(foreign)).toMatchObject({
      status: 'running',
      attempts: 1,
      lockedBy: 'node-elsewhere:boot1:w0',
      leaseUntil: foreignLease,
    })
    expect(journal()).not.toContain(foreign)
    // The periodic purge adds its own rows; these are the test's (21, and the other node's one).
    expect(core.db.select().from(jobs).where(eq(jobs.kind, 'test.journal')).all()).toHaveLength(22)
    core.db.$client.close()
  }, 60_000)
})
