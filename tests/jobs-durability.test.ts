import { afterAll, describe, expect, it } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import { loadConfig } from '../src/config'
import { createCore } from '../src/core'
import { jobs } from '../src/db/schema'
import { createLogger } from '../src/shared/logger'
import { tempDir } from './support/core'

const dataDir = tempDir()
const env = { ...process.env, DATA_DIR: dataDir, PORT: '0', JOB_LEASE_SECONDS: '2', LOG_LEVEL: 'warn' }
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
  it('re-runs the job that was running and loses nothing that was queued', async () => {
    // The server creates and migrates the store; this process enqueues through the same code.
    await until('the store', () => existsSync(join(dataDir, 'gatehouse.db')))
    await Bun.sleep(300)
    const core = createCore(loadConfig(env), { log: createLogger('error') })
    const running = core.jobs.enqueue('test.journal', { ms: 1500 })
    await until('the long job to start', () => journal().includes(`start ${running} 1`))
    const queued = Array.from({ length: 20 }, (_, i) =>
      core.jobs.enqueue('test.journal', { ms: 10 }, { runAt: Date.now() + 60_000 + i }),
    )

    server.kill('SIGKILL')
    await server.exited
    expect(journal()).not.toContain(`done ${running}`)

    // Make the queued jobs due, then restart: the lease of the killed run expires and it runs again.
    core.db.update(jobs).set({ runAt: Date.now() }).run()
    server = spawnServer()
    await until(
      'every job to finish',
      () =>
        core.db
          .select()
          .from(jobs)
          .all()
          .every((j) => j.status === 'done'),
      30_000,
    )
    const log = journal()
    expect(log).toContain(`start ${running} 2`)
    expect(log).toContain(`done ${running} 2`)
    for (const id of queued) expect(log).toContain(`done ${id} 1`)
    // The periodic purge adds its own rows; these are the test's.
    const all = core.db.select().from(jobs).where(eq(jobs.kind, 'test.journal')).all()
    expect(all).toHaveLength(21)
    core.db.$client.close()
  }, 60_000)
})
