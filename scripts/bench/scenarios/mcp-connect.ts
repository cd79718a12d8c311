// `mcp-connect`: `gatehouse mcp` (issue 58): what an agent waits for when it connects (the key file
// read, the RFC 7523 exchange, tools/list), and what a tool call costs over the same API call made
// directly with the same key's token. The fixtures come through the public API (../fixtures.ts), with
// a workspace:read machine key whose key file an agent would be given.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { MachineKeyAuth } from '../../../src/cli/key-auth'
import { openMcpContext } from '../../../src/cli/mcp'
import { createMcpServer } from '../../../src/cli/mcp/server'
import { cpuWindow } from '../cpu'
import { gatehouseWithOwnedWorkspace } from '../fixtures'
import { formatMs, type Percentiles, summarize } from '../load'
import { createMachineKey } from '../machine-keys'
import type { Gatehouse } from '../process'
import { reportCpu, reportLatency, type Scenario } from '../scenario'
import type { BenchSession } from '../setup'

const root = join(import.meta.dir, '../../..')

interface McpFixture {
  workspaceId: string
  keyPath: string
}

/** A workspace:read key of `workspaceId`, created by its owner, written where an agent would be given it. */
async function mcpFixture(gh: Gatehouse, owner: BenchSession, workspaceId: string): Promise<McpFixture> {
  const key = await createMachineKey(gh.url, owner, workspaceId, ['workspace:read'])
  const keyPath = join(gh.dataDir, 'key.json')
  writeFileSync(keyPath, JSON.stringify(key), { mode: 0o600 })
  return { workspaceId, keyPath }
}

/** `gatehouse mcp` spawned by the SDK's stdio client, as an MCP client starts it. */
function spawnedClient(keyPath: string) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['src/main.ts', 'mcp'],
    cwd: root,
    env: { PATH: process.env.PATH ?? '', SERVICE_MACHINE_KEY_PATH: keyPath },
    stderr: 'ignore',
  })
  return { client: new Client({ name: 'bench', version: '1.0.0' }), transport }
}

interface McpConnectResult {
  /** Spawn → tools listed: the process start, its imports, the key read, the exchange, tools/list. */
  spawned: Percentiles
  /** In this process: the key read, the exchange and tools/list over an in-memory transport. */
  inProcess: Percentiles
  tools: number
  /** list_apps through the spawned server (stdio → MCP → the API). */
  toolCall: Percentiles
  /** GET …/apps made directly with a token of the same key. */
  direct: Percentiles
}

const time = async (fn: () => Promise<unknown>) => {
  const t0 = performance.now()
  await fn()
  return performance.now() - t0
}

/**
 * `connects` connects of each kind, then `calls` pairs of a list_apps tool call and the same GET
 * made directly, alternated so that both see the same machine.
 */
async function measureMcpConnect(
  fixture: McpFixture,
  opts: { connects: number; calls: number },
): Promise<McpConnectResult> {
  const spawned: number[] = []
  let tools = 0
  for (let i = 0; i < opts.connects; i++) {
    const { client, transport } = spawnedClient(fixture.keyPath)
    spawned.push(
      await time(async () => {
        await client.connect(transport)
        tools = (await client.listTools()).tools.length
      }),
    )
    await client.close()
  }
  const inProcess: number[] = []
  for (let i = 0; i < opts.connects; i++) {
    inProcess.push(
      await time(async () => {
        const { ctx } = await openMcpContext(fixture.keyPath)
        const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
        await createMcpServer({ ...ctx, log: () => {} }).connect(serverSide)
        const client = new Client({ name: 'bench', version: '1.0.0' })
        await client.connect(clientSide)
        await client.listTools()
        await client.close()
      }),
    )
  }

  const { client, transport } = spawnedClient(fixture.keyPath)
  await client.connect(transport)
  const auth = new MachineKeyAuth(fixture.keyPath)
  const appsUrl = `${new URL(auth.file.token_url).origin}/v1/workspaces/${fixture.workspaceId}/apps`
  const direct = async () => {
    const res = await fetch(appsUrl, { headers: { authorization: `Bearer ${await auth.token()}` } })
    if (res.status !== 200) throw new Error(`GET ${appsUrl} answered ${res.status}`)
    await res.json()
  }
  const viaMcp = async () => {
    const result = await client.callTool({ name: 'list_apps', arguments: {} })
    if (result.isError) throw new Error(`list_apps: ${JSON.stringify(result.content)}`)
  }
  await direct()
  await viaMcp()
  const toolCall: number[] = []
  const directCall: number[] = []
  try {
    for (let i = 0; i < opts.calls; i++) {
      toolCall.push(await time(viaMcp))
      directCall.push(await time(direct))
    }
  } finally {
    await client.close()
  }
  return {
    spawned: summarize(spawned),
    inProcess: summarize(inProcess),
    tools,
    toolCall: summarize(toolCall),
    direct: summarize(directCall),
  }
}

const CONNECTS = 20
const CALLS = 200
const APPS = 10

export default {
  description: `gatehouse mcp with a workspace:read machine key made through the API (${APPS} apps): connect (spawned by the SDK's stdio client: process start, key file read, RFC 7523 exchange, tools/list), and a list_apps tool call against GET …/apps made directly with a token of the same key`,
  method: `${CONNECTS} connects one after another, spawn → tools listed (the samples), then ${CONNECTS} in this process (no process start); then ${CALLS} alternated pairs of a list_apps call through one spawned session and the same GET made directly`,
  async run({ opts, report }) {
    const { gh, session, ws } = await gatehouseWithOwnedWorkspace(opts, APPS)
    try {
      const fixture = await mcpFixture(gh, session, ws.workspaceId)
      const done = cpuWindow([gh.pid])
      const r = await measureMcpConnect(fixture, { connects: CONNECTS, calls: CALLS })
      // "Fails at connect within seconds": a working connect takes well under that.
      reportLatency(report, 'connect, spawned', r.spawned, 2_000)
      report.print(
        `  connect in process (key read + exchange + tools/list, ${r.tools} tools): ${formatMs(r.inProcess)}`,
      )
      report.print(`  list_apps tool call over stdio: ${formatMs(r.toolCall)}`)
      report.print(`  GET …/apps directly with the key's token: ${formatMs(r.direct)}`)
      report.figure('tool call overhead p50 ms', r.toolCall.p50 - r.direct.p50, 'ms')
      reportCpu(report, done(), CONNECTS, 'connect')
    } finally {
      await gh.stop()
    }
  },
} satisfies Scenario
