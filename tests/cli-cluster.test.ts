import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { runCli, spawnCli } from './support/cli'
import { type Cluster, startCluster } from './support/cluster'
import { tempDir } from './support/core'
import { createTestDatabase, testStore } from './support/postgres'
import type { TestServer } from './support/server'
import { approveDevice, type Json, json, type PlatformUser, signUpUser } from './support/users'

// Issue 58: the CLI against three `serve` nodes of one PostgreSQL database behind one URL (a
// round-robin proxy: each request on the next node) works as against one node. Its device code,
// refresh token, a provisioning workspace and a machine key's single-use assertions are rows every
// node reads.
let cluster: Cluster
let owner: PlatformUser
let env: Record<string, string>
const work = tempDir('gatehouse-cli-cluster-')

describe.skipIf(testStore !== 'postgres')('the CLI on a three-node cluster (PostgreSQL leg)', () => {
  beforeAll(async () => {
    if (testStore !== 'postgres') return
    cluster = await startCluster(await createTestDatabase(), 3)
    owner = await signUpUser({ baseUrl: cluster.baseUrl } as TestServer, {
      email: 'tri@example.com',
      password: 'three nodes one url',
      name: 'Tri',
    })
    env = { GATEHOUSE_URL: cluster.baseUrl, GATEHOUSE_CONFIG_DIR: tempDir('gatehouse-cli-config-') }
  }, 60_000)
  afterAll(async () => {
    await cluster?.stop()
  })

  const cli = (args: string[]) => runCli(args, env)
  async function jsonOf(args: string[]): Promise<Json> {
    const run = await cli([...args, '--json'])
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' })
    return JSON.parse(run.stdout)
  }

  it('logs in, creates a workspace (waiting for active), an app, a key, tenants, and tails the audit log', async () => {
    const from = cluster.proxy.served.length
    const login = spawnCli(['login'], env)
    const [, link] = await login.waitFor('stderr', /Or open this link, which carries the code: (\S+)/)
    await approveDevice(owner.agent, link!)
    expect((await login.exited).code).toBe(0)

    const ws = await jsonOf(['workspaces', 'create', 'Tri Co'])
    expect(ws).toMatchObject({ name: 'Tri Co', state: 'active' })
    const app = await jsonOf([
      'apps',
      'create',
      'Shop',
      '--redirect-uri',
      'https://shop.example.com/cb',
      '-w',
      ws.id,
    ])
    const keyFile = join(work, 'tri.json')
    expect(
      (await cli(['keys', 'create', 'tri', '--scope', 'workspace:admin', '--out', keyFile, '-w', ws.id]))
        .code,
    ).toBe(0)
    // The key's calls: an exchange, then the list, on whichever nodes they land.
    const apps = await runCli(['apps', 'list', '--json'], { ...env, SERVICE_MACHINE_KEY_PATH: keyFile })
    expect(JSON.parse(apps.stdout).items.map((a: Json) => a.client_id)).toEqual([app.client_id])
    const batch = join(work, 'tenants.json')
    writeFileSync(
      batch,
      JSON.stringify([
        { slug: 'a', name: 'A' },
        { slug: 'b', name: 'B' },
      ]),
    )
    expect(await jsonOf(['tenants', 'batch', batch, '-w', ws.id])).toMatchObject({ created: 2, failed: 0 })
    const tail = await cli(['audit', 'tail', '-w', ws.id, '--json'])
    const actions = tail.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).action)

    // What the CLI did, read through the API with the owner's session.
    const api = (path: string) => json(owner.agent, 'GET', `/v1/workspaces/${ws.id}${path}`)
    expect((await api('')).body.state).toBe('active')
    expect((await api('/apps')).body.items.map((a: Json) => a.client_id)).toEqual([app.client_id])
    const { key_id } = JSON.parse(readFileSync(keyFile, 'utf8'))
    expect((await api('/machine-keys')).body.items.map((k: Json) => k.id)).toEqual([key_id])
    expect((await api('/tenants')).body.items.map((t: Json) => t.slug).sort()).toEqual(['a', 'b'])
    const logged = (await api('/audit-log')).body.items.map((e: Json) => e.action).reverse()
    expect(actions).toEqual(logged)
    expect(actions).toEqual(expect.arrayContaining(['app.created', 'machine_key.created', 'tenant.created']))
    expect(new Set(cluster.proxy.served.slice(from)).size).toBe(3)
  }, 90_000)
})
