import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { tempDir } from './temp'

const root = join(import.meta.dir, '../..')

/** Writes a key file (the `key` object of a key's creation) where an agent's config would point. */
export function writeKeyFile(key: unknown): string {
  const path = join(tempDir('gatehouse-mcp-'), 'key.json')
  writeFileSync(path, JSON.stringify(key), { mode: 0o600 })
  return path
}

export interface McpSession {
  client: Client
  /** What `gatehouse mcp` wrote to stderr so far. */
  stderr(): string
  close(): Promise<void>
}

/**
 * `bun src/main.ts mcp` spawned by the SDK's own stdio client, as Claude Desktop or any MCP client
 * starts it: only PATH, the key path and `env` in its environment. Rejects as the client's
 * connect does when the server exits first (the stderr it wrote is on the error's `stderr`).
 */
export async function connectMcp(keyPath: string, env: Record<string, string> = {}): Promise<McpSession> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['src/main.ts', 'mcp'],
    cwd: root,
    env: { PATH: process.env.PATH ?? '', SERVICE_MACHINE_KEY_PATH: keyPath, ...env },
    stderr: 'pipe',
  })
  let stderr = ''
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const client = new Client({ name: 'gatehouse-tests', version: '1.0.0' })
  try {
    await client.connect(transport)
  } catch (e) {
    // The child's last stderr may still be in flight when the transport closes.
    await Bun.sleep(100)
    throw Object.assign(e as Error, { stderr })
  }
  return { client, stderr: () => stderr, close: () => client.close() }
}

/** A tool call's result, typed as tools/call answers it. */
export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}) {
  return (await client.callTool({ name, arguments: args })) as CallToolResult & {
    structuredContent?: Record<string, unknown>
  }
}

/** The first text block of a result. */
export const textOf = (result: CallToolResult) => (result.content[0] as { text: string }).text
