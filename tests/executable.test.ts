// legs: once — builds and runs the compiled executable; its store code is what both legs test
import { afterAll, describe, expect, it } from 'bun:test'
import { rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from './support/core'

const root = join(import.meta.dir, '..')
const outDir = tempDir('gatehouse-exe-')
const exe = join(outDir, 'gatehouse')
const SCALAR = join(root, 'node_modules/@scalar/api-reference/dist/browser/standalone.js')
let child: ReturnType<typeof Bun.spawn> | null = null
let url = ''
afterAll(async () => {
  child?.kill('SIGKILL')
  await child?.exited
  // The copy of the executable is ~110 MiB: gone with this file, not at the end of the run.
  rmSync(outDir, { recursive: true, force: true })
})

/**
 * Reads the child's stdout until the `listening` log line and returns its URL, then keeps draining
 * it: a closed pipe would kill the server (EPIPE) at its next access-log line.
 */
async function listeningUrl(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader()
  const decoder = new TextDecoder()
  let seen = ''
  for (;;) {
    const { done, value } = await reader.read()
    if (done) throw new Error(`server exited before listening:\n${seen}`)
    seen += decoder.decode(value)
    const line = seen.split('\n').find((l) => l.includes('"msg":"listening"'))
    if (line) {
      void (async () => {
        while (!(await reader.read()).done) {}
      })()
      return JSON.parse(line).url
    }
  }
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
    url = await listeningUrl(child.stdout as ReadableStream<Uint8Array>)
    const res = await fetch(`${url}/healthz`)
    const coldStartMs = performance.now() - started
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ status: 'ok', version: '0.1.0', database: 'ok' })
    console.log(
      `executable: ${(size / 2 ** 20).toFixed(1)} MiB, cold start to first /healthz ${coldStartMs.toFixed(0)} ms`,
    )
  }, 120_000)

  it('serves /docs and the Scalar bundle it carries, with no network', async () => {
    const docs = await fetch(`${url}/docs`)
    expect(docs.status).toBe(200)
    expect(docs.headers.get('content-security-policy')).toStartWith("default-src 'self'")
    expect(await docs.text()).toContain('<script src="/docs/scalar.js?v=1.72.1"></script>')
    const script = await fetch(`${url}/docs/scalar.js`, { headers: { 'accept-encoding': 'identity' } })
    expect(script.status).toBe(200)
    expect(Buffer.from(await script.arrayBuffer()).equals(await Bun.file(SCALAR).bytes())).toBe(true)
  })

  it('answers `healthcheck` with 0 while serving, and 1 once the port is closed', async () => {
    const env = { PATH: process.env.PATH ?? '', PORT: new URL(url).port }
    const up = Bun.spawnSync([exe, 'healthcheck'], { env, stderr: 'pipe' })
    expect(up.stderr.toString()).toBe('')
    expect(up.exitCode).toBe(0)
    child?.kill('SIGKILL')
    await child?.exited
    const down = Bun.spawnSync([exe, 'healthcheck'], { env, stderr: 'pipe' })
    expect(down.exitCode).toBe(1)
    expect(down.stderr.toString()).toStartWith('gatehouse: healthcheck failed: ')
  })

  it('answers `version` and applies migrations with `migrate`', () => {
    expect(Bun.spawnSync([exe, 'version']).stdout.toString().trim()).toBe('0.1.0')
    const cwd = tempDir('gatehouse-migrate-')
    const migrate = Bun.spawnSync([exe, 'migrate'], { cwd, env: { DATA_DIR: join(cwd, 'state') } })
    expect(migrate.exitCode).toBe(0)
    expect(migrate.stdout.toString()).toContain('migrations applied')
    expect(statSync(join(cwd, 'state', 'gatehouse.db')).size).toBeGreaterThan(0)
  })

  it('carries the API client: its commands answer, and exit 3 with no login', () => {
    const env = { PATH: process.env.PATH ?? '', GATEHOUSE_CONFIG_DIR: tempDir('gatehouse-config-') }
    const help = Bun.spawnSync([exe, 'workspaces', 'create', '--help'], { env })
    expect(help.exitCode).toBe(0)
    expect(help.stdout.toString()).toContain('$ gatehouse workspaces create "Acme"')
    const whoami = Bun.spawnSync([exe, 'whoami', '--base-url', url], { env, stderr: 'pipe' })
    expect(whoami.exitCode).toBe(3)
    expect(whoami.stderr.toString()).toBe(
      `gatehouse: not logged in to ${url}: run \`gatehouse login\`, or pass --key-file\n`,
    )
  })
})
