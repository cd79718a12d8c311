import { afterAll, describe, expect, it } from 'bun:test'
import { existsSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { runCli } from './support/cli'
import { tempDir } from './support/core'
import { freePort, startTestServer } from './support/server'

const server = await startTestServer()
afterAll(() => server.stop())

const cli = runCli

describe('the front page', () => {
  it('sends a browser from / to the dashboard', async () => {
    const res = await fetch(`${server.baseUrl}/`, { redirect: 'manual' })
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toBe('/app/')
  })
})

describe('gatehouse serve on a port already in use', () => {
  it('prints one line and exits 2', async () => {
    const holder: Server = createServer()
    const port = await new Promise<number>((resolve) =>
      holder.listen(0, '127.0.0.1', () => resolve((holder.address() as { port: number }).port)),
    )
    try {
      const run = await cli(['serve'], { DATA_DIR: tempDir(), HOST: '127.0.0.1', PORT: String(port) })
      expect(run.stderr).toBe(`gatehouse: port ${port} is already in use\n`)
      expect(run.code).toBe(2)
    } finally {
      await new Promise((resolve) => holder.close(resolve))
    }
  }, 30_000)
})

// The DATA_DIR serve lock guards a SQLite store; on PostgreSQL nodes share the store (a node-id lock instead).
describe.skipIf(server.core.store.dialect !== 'sqlite')(
  'a second gatehouse serve on the same DATA_DIR',
  () => {
    it("is refused with one line and exit 2, and leaves the first one's running jobs alone", async () => {
      // The first server's job, running under its lease, as if mid-way.
      const job = await server.core.jobs.enqueue('test.never', null, { runAt: Date.now() + 3_600_000 })
      await server.core.store.exec(
        "UPDATE jobs SET status = 'running', locked_by = $1, lease_until = $2 WHERE id = $3",
        [`${server.core.config.nodeId}:first-boot:w0`, Date.now() + 60_000, job],
      )
      const run = await cli(['serve'], {
        DATA_DIR: server.core.config.dataDir,
        HOST: '127.0.0.1',
        PORT: String(await freePort()),
      })
      expect(run.stderr).toBe(
        `gatehouse: another gatehouse process is already serving ${server.core.config.dataDir}\n`,
      )
      expect(run.code).toBe(2)
      const rows = await server.core.store.query('SELECT status, locked_by FROM jobs WHERE id = $1', [job])
      expect(rows).toHaveLength(1)
      expect(rows[0]).toEqual({ status: 'running', locked_by: `${server.core.config.nodeId}:first-boot:w0` })
    }, 30_000)

    it('starts once the first one has stopped (the lock goes with its process or its stop)', async () => {
      const dataDir = tempDir()
      const first = await startTestServer({}, dataDir)
      await expect(startTestServer({}, dataDir)).rejects.toThrow('already serving')
      await first.stop()
      const second = await startTestServer({}, dataDir)
      expect((await fetch(`${second.baseUrl}/healthz`)).status).toBe(200)
      await second.stop()
    })
  },
)

describe('gatehouse healthcheck', () => {
  it('exits 0 when /healthz answers 200, reading PORT and writing nothing', async () => {
    // HOST unset means 0.0.0.0 for `serve`; the check then asks 127.0.0.1.
    const dataDir = join(tempDir(), 'never-created')
    const run = await cli(['healthcheck'], { PORT: String(server.port), DATA_DIR: dataDir })
    expect(run).toEqual({ stdout: '', stderr: '', code: 0 })
    expect(existsSync(dataDir)).toBe(false)
  })

  it('exits 1 with one line when nothing listens on the port', async () => {
    const port = await freePort()
    const run = await cli(['healthcheck'], { PORT: String(port), DATA_DIR: join(tempDir(), 'never-created') })
    expect(run.code).toBe(1)
    expect(run.stdout).toBe('')
    expect(run.stderr).toMatch(
      new RegExp(`^gatehouse: healthcheck failed: http://127\\.0\\.0\\.1:${port}/healthz [^\\n]+\\n$`),
    )
  })

  it('exits 1 when /healthz answers anything but 200', async () => {
    const degraded = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: () => Response.json({ status: 'degraded' }, { status: 503 }),
    })
    try {
      const run = await cli(['healthcheck'], { HOST: '127.0.0.1', PORT: String(degraded.port) })
      expect(run.code).toBe(1)
      expect(run.stderr).toBe(
        `gatehouse: healthcheck failed: http://127.0.0.1:${degraded.port}/healthz answered 503\n`,
      )
    } finally {
      degraded.stop(true)
    }
  })
})
