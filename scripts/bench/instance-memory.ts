// `bun scripts/bench/instance-memory.ts [N]` (2,000): the heap one served workspace instance keeps, in
// this process: N instances loaded as the pool loads them (the keys of one seeded instance, read
// for each), each serving one discovery and one client-credentials token through the one shared
// Provider and `inject` as the bridge does, held like the pool holds them; heap (bun:jsc
// heapStats) and RSS after Bun.gc(true), before and after, per instance. `--churn M`: M loads
// through a 500-slot window instead, printing heap and RSS every 1,000. `--no-discovery`,
// `--no-token`: leave that request out, to see what each adds to an instance (each instance is
// followed by a turn of the event loop, as a server's requests are).

import { heapStats } from 'bun:jsc'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../src/config'
import { createCore } from '../../src/core'
import { migrate } from '../../src/db/client'
import { clientReads } from '../../src/identity/clients'
import { inject } from '../../src/identity/engine/inject'
import { ensureInstanceKeys, loadInstanceKeys } from '../../src/identity/engine/keys'
import { DEFAULT_LOGIN_POLICY } from '../../src/identity/login-policy'
import { buildProvider, servedInstance, serving } from '../../src/identity/provider'
import { sha256Hex } from '../../src/shared/crypto'
import { newWorkspaceId } from '../../src/shared/ids'
import { createLogger } from '../../src/shared/logger'

const args = process.argv.slice(2)
const churnAt = args.indexOf('--churn')
const churn = churnAt >= 0 ? Number(args[churnAt + 1]) : 0
const count = Number(args.find((a, i) => !a.startsWith('--') && !(churnAt >= 0 && i === churnAt + 1)) ?? 2000)
const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-instance-memory-'))
const config = loadConfig({
  DATA_DIR: dataDir,
  DATABASE_URL: '',
  SECRET_KEY: randomBytes(32).toString('hex'),
  BASE_URL: 'http://127.0.0.1:1',
})
const core = createCore(config, { log: createLogger('error') })
await migrate(core.store)
const seeded = newWorkspaceId()
await ensureInstanceKeys(core, seeded)
if (!(await loadInstanceKeys(core, seeded))) throw new Error('no keys')
const secret = randomBytes(24).toString('base64url')
const clients = clientReads({
  find: async (wanted) =>
    wanted.map(({ clientId }) => ({
      clientId,
      name: 'bench',
      clientSecretHash: sha256Hex(secret),
      type: 'web' as const,
      redirectUris: ['https://rp.example/cb'],
      postLogoutRedirectUris: [],
      extraGrants: [],
    })),
})

const provider = buildProvider(core, { claims: [], steps: [], grants: [] })
const callback = provider.callback()
const held: unknown[] = []
async function buildAndServe() {
  const id = newWorkspaceId()
  const prefix = `/i/${id}`
  const instance = {
    // Read for each, as the pool reads an instance's: objects of its own.
    ...servedInstance(core, id, prefix, (await loadInstanceKeys(core, seeded))!, clients),
    // An instance that serves no page has no settings read (pool.ts): one shared policy stands in.
    policy: DEFAULT_LOGIN_POLICY,
  }
  const call = async (method: string, path: string, headers: Record<string, string>, body?: string) => {
    const res = await inject((req, res) => serving(instance, () => callback(req, res)), {
      method,
      url: path,
      originalUrl: `${prefix}${path}`,
      headers: {
        host: '127.0.0.1:1',
        'x-forwarded-proto': 'http',
        'x-forwarded-host': '127.0.0.1:1',
        ...headers,
      },
      body: body ? new TextEncoder().encode(body) : null,
      remoteAddress: '127.0.0.1',
    })
    const text = await res.text()
    if (res.status !== 200) throw new Error(`${path}: HTTP ${res.status} ${text.slice(0, 200)}`)
  }
  if (!args.includes('--no-discovery')) await call('GET', '/.well-known/openid-configuration', {})
  if (!args.includes('--no-token'))
    await call(
      'POST',
      '/token',
      {
        authorization: `Basic ${Buffer.from(`bench:${secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      'grant_type=client_credentials',
    )
  held.push(instance)
  // A server turns its event loop between requests, and what a request's native objects hold
  // (its Response, its body) is released then: a loop of requests that never waits on another
  // thread (ES256 signed on the event loop, tried) kept every one of them (48 KiB an instance).
  await new Promise((resolve) => setImmediate(resolve))
}

const collected = () => {
  Bun.gc(true)
  Bun.gc(true)
  return { heap: heapStats().heapSize, rss: process.memoryUsage().rss }
}
const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`
const kib = (b: number) => `${(b / 1024).toFixed(1)} KiB`

// Code compiled once is not charged to the instances measured.
for (let i = 0; i < 20; i++) await buildAndServe()
held.length = 0
if (churn > 0) {
  for (let i = 1; i <= churn; i++) {
    await buildAndServe()
    if (held.length > 500) held.shift()
    if (i % 1000 === 0) {
      Bun.gc(true)
      const m = process.memoryUsage()
      console.log(
        `${i} builds: heapUsed ${mib(m.heapUsed)}, heapTotal ${mib(m.heapTotal)}, RSS ${mib(m.rss)}`,
      )
    }
  }
} else {
  const before = collected()
  for (let i = 0; i < count; i++) await buildAndServe()
  const after = collected()
  console.log(
    `${count} instances, ${args.includes('--no-discovery') ? 'no discovery' : 'one discovery'} and ${args.includes('--no-token') ? 'no token' : 'one token'} each: ${kib((after.heap - before.heap) / count)} of heap and ${kib((after.rss - before.rss) / count)} of RSS each through one Provider (heap ${mib(before.heap)} → ${mib(after.heap)}, RSS ${mib(before.rss)} → ${mib(after.rss)})`,
  )
}
await core.store.close()
rmSync(dataDir, { recursive: true, force: true })
process.exit(0)
