import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { startTestServer, type TestServer } from './support/server'

// `tick()` on a server whose jobs run in worker threads (as `gatehouse serve` runs them).
let server: TestServer
beforeAll(async () => {
  server = await startTestServer({}, undefined, {
    handlerModules: [new URL('./fixtures/test-jobs.ts', import.meta.url).pathname],
  })
})
afterAll(() => server.stop())

describe('a server with job worker threads', () => {
  it('resolves tick() once its workers ran every job that was due', async () => {
    const journal = () => readFileSync(join(server.core.config.dataDir, 'jobs.log'), 'utf8')
    const ids: string[] = []
    for (const ms of [300, 10, 100]) ids.push(await server.core.jobs.enqueue('test.journal', { ms }))
    await server.tick()
    for (const id of ids) expect(journal()).toContain(`done ${id} 1`)
  })
})
