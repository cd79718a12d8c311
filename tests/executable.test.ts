import { afterAll, describe, expect, it } from 'bun:test'
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from './support/core'

const root = join(import.meta.dir, '..')
const outDir = tempDir('gatehouse-exe-')
const exe = join(outDir, 'gatehouse')
let child: ReturnType<typeof Bun.spawn> | null = null
afterAll(() => child?.kill('SIGKILL'))

/** Reads the child's stdout until the `listening` log line and returns its URL. */
async function listeningUrl(stream: ReadableStream<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder()
  let seen = ''
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) {
    seen += decoder.decode(chunk)
    const line = seen.split('\n').find((l) => l.includes('"msg":"listening"'))
    if (line) return JSON.parse(line).url
  }
  throw new Error(`server exited before listening:\n${seen}`)
}

describe('the single executable', () => {
  it('builds, then serves /healthz from another directory with a fresh DATA_DIR', async () => {
    const build = Bun.spawnSync(['bun', 'scripts/build.ts', exe], { cwd: root, stderr: 'pipe' })
    expect(build.exitCode).toBe(0)
    const size = statSync(exe).size

    const cwd = tempDir('gatehouse-run-')
    const started = performance.now()
    child = Bun.spawn([exe, 'serve'], {
      cwd,
      env: { PATH: process.env.PATH ?? '', DATA_DIR: join(cwd, 'state'), PORT: '0' },
      stdout: 'pipe',
      stderr: 'inherit',
    })
    const url = await listeningUrl(child.stdout as ReadableStream<Uint8Array>)
    const res = await fetch(`${url}/healthz`)
    const coldStartMs = performance.now() - started
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ status: 'ok', version: '0.1.0', database: 'ok' })
    console.log(
      `executable: ${(size / 2 ** 20).toFixed(1)} MiB, cold start to first /healthz ${coldStartMs.toFixed(0)} ms`,
    )
  }, 120_000)

  it('answers `version` and applies migrations with `migrate`', () => {
    expect(Bun.spawnSync([exe, 'version']).stdout.toString().trim()).toBe('0.1.0')
    const cwd = tempDir('gatehouse-migrate-')
    const migrate = Bun.spawnSync([exe, 'migrate'], { cwd, env: { DATA_DIR: join(cwd, 'state') } })
    expect(migrate.exitCode).toBe(0)
    expect(migrate.stdout.toString()).toContain('migrations applied')
    expect(statSync(join(cwd, 'state', 'gatehouse.db')).size).toBeGreaterThan(0)
  })
})
