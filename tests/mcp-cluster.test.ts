import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { SQL } from 'bun'
import { type Cluster, startCluster } from './support/cluster'
import { callTool, connectMcp, type McpSession, textOf, writeKeyFile } from './support/mcp'
import { createTestDatabase, testStore } from './support/postgres'
import type { TestServer } from './support/server'
import { json, type PlatformUser, signUpUser, waitForState } from './support/users'

// Issue 58, item 2 on three `serve` nodes of one PostgreSQL database behind one round-robin URL:
// `gatehouse mcp` exchanges its key on one node and calls on the others, as against one node.
let cluster: Cluster
let owner: PlatformUser
let ws: string
const sessions: McpSession[] = []

async function keyWith(scopes: string[]): Promise<{ id: string; path: string }> {
  const res = await json(owner.agent, 'POST', `/v1/workspaces/${ws}/machine-keys`, { name: 'agent', scopes })
  expect(res.status).toBe(201)
  return { id: res.body.id, path: writeKeyFile(res.body.key) }
}

describe.skipIf(testStore !== 'postgres')('gatehouse mcp on a three-node cluster (PostgreSQL leg)', () => {
  beforeAll(async () => {
    if (testStore !== 'postgres') return
    cluster = await startCluster(await createTestDatabase(), 3)
    owner = await signUpUser({ baseUrl: cluster.baseUrl } as TestServer, {
      email: 'mcp-owner@example.com',
      password: 'a long password 1',
      name: 'Owner',
    })
    const created = await json(owner.agent, 'POST', '/v1/workspaces', { name: 'Clustered' })
    expect(created.status).toBe(201)
    ws = created.body.id
    await waitForState(owner.agent, ws, 'active', 20_000)
  }, 60_000)
  afterAll(async () => {
    await Promise.all(sessions.map((s) => s.close()))
    await cluster?.stop()
  })

  it('lists read tools and reads with a workspace:read key, and creates an app audited as key:<id> with a write key', async () => {
    const reader = await keyWith(['workspace:read'])
    const read = await connectMcp(reader.path)
    sessions.push(read)
    const from = cluster.proxy.served.length
    const tools = (await read.client.listTools()).tools
    expect(tools.every((t) => t.annotations?.readOnlyHint === true)).toBe(true)
    expect(tools.map((t) => t.name)).toContain('list_apps')
    for (let i = 0; i < 3; i++)
      expect((await callTool(read.client, 'get_workspace')).structuredContent).toMatchObject({
        id: ws,
        name: 'Clustered',
      })
    // Three calls, three nodes.
    expect(new Set(cluster.proxy.served.slice(from)).size).toBe(3)

    const writer = await keyWith(['workspace:write'])
    const write = await connectMcp(writer.path, { GATEHOUSE_MCP_REFRESH_BEFORE_MS: '899000' })
    sessions.push(write)
    const created = await callTool(write.client, 'create_app', {
      name: 'Cluster app',
      redirect_uris: ['https://cluster.example.com/cb'],
    })
    expect(created.isError).toBeFalsy()
    const appId = created.structuredContent!.id as string
    // A second after connect the token counts as due: the next call exchanges again, on another node.
    await Bun.sleep(1_100)
    const listed = await callTool(read.client, 'list_apps')
    expect(listed.structuredContent).toMatchObject({ items: [{ id: appId, name: 'Cluster app' }], total: 1 })
    expect(textOf(listed)).toBe(`1 app\n- Cluster app (${appId})`)
    const deleted = await callTool(write.client, 'delete_app', { app_id: appId })
    const sql = new SQL({ url: cluster.databaseUrl, max: 1 })
    const [{ n }] =
      await sql`SELECT count(*)::int AS n FROM machine_key_assertions WHERE key_id = ${writer.id}`
    await sql.close()
    expect(n).toBe(2)
    expect(deleted.structuredContent).toEqual({ deleted: true })
    const audit = await json(owner.agent, 'GET', `/v1/workspaces/${ws}/audit-log?actor=key:${writer.id}`)
    expect(audit.body.items.map((e: { action: string }) => e.action)).toEqual(['app.deleted', 'app.created'])
    const key = await json(owner.agent, 'GET', `/v1/workspaces/${ws}/machine-keys/${writer.id}`)
    expect(key.body.last_used_at).not.toBeNull()
  }, 60_000)

  it('fails to connect with a revoked key, naming the key file', async () => {
    const key = await keyWith(['workspace:read'])
    expect((await json(owner.agent, 'DELETE', `/v1/workspaces/${ws}/machine-keys/${key.id}`)).status).toBe(
      200,
    )
    const error = (await connectMcp(key.path).catch((e) => e)) as Error & { stderr: string }
    expect(error).toBeInstanceOf(Error)
    expect(error.stderr).toContain(`machine key ${key.path}: the exchange was refused: This key was revoked`)
  }, 30_000)
})
