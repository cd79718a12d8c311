import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js'
import { VERSION } from '../../config'
import { type ApiClient, ApiError } from '../api'
import { KeyFileError } from '../key-auth'
import type { Tool } from './tools'
import { requestOf, summaryOf } from './tools'

type Json = Record<string, unknown>

/** What every session of `gatehouse mcp` shares: the key's tools, its client and its workspace. */
export interface McpContext {
  /** The tools the key's scopes allow, and only those. */
  tools: Tool[]
  api: ApiClient
  /** The key's own workspace: the default, and the only one accepted. */
  workspaceId: string
  /** `key:<key id>`: who the control plane's audit log names for these calls. */
  actor: string
  /** One line per call (stderr): the tool, the actor, the outcome. */
  log: (line: Json) => void
}

const failure = (text: string, detail: Json): CallToolResult => ({
  isError: true,
  content: [{ type: 'text', text }],
  structuredContent: { error: detail },
})

/** One tool call through the control plane; the API's refusals are results with isError, not protocol errors. */
async function callTool(ctx: McpContext, name: string, args: Json): Promise<CallToolResult> {
  const tool = ctx.tools.find((t) => t.spec.name === name)
  const entry = { at: new Date().toISOString(), actor: ctx.actor, tool: name }
  if (!tool) {
    ctx.log({ ...entry, outcome: 'unknown tool' })
    return failure(`No tool ${name} for this machine key (its scopes decide which tools it has)`, {
      status: null,
      detail: 'unknown tool',
    })
  }
  const built = requestOf(tool, args, ctx.workspaceId)
  if ('problem' in built) {
    ctx.log({ ...entry, outcome: 'refused', detail: built.problem })
    return failure(built.problem, { status: null, detail: built.problem })
  }
  try {
    const result = await ctx.api.request(built.method, built.path, built.body)
    ctx.log({ ...entry, outcome: 'ok', request: `${built.method} ${built.path}` })
    const structured = (result && typeof result === 'object' ? result : { result }) as Json
    return {
      // The summary first; then the JSON itself, for clients that show text only (MCP "Structured
      // content": a tool returning structured content should also return it serialized).
      content: [
        { type: 'text', text: summaryOf(tool, result) },
        { type: 'text', text: JSON.stringify(structured) },
      ],
      structuredContent: structured,
    }
  } catch (e) {
    if (e instanceof ApiError) {
      ctx.log({ ...entry, outcome: `error ${e.status}`, request: `${built.method} ${built.path}` })
      return failure(`${e.status}: ${ApiError.text(e.detail)}`, { status: e.status, detail: e.detail })
    }
    // The key stopped being exchangeable mid-session (revoked, expired): say so, with its file.
    if (e instanceof KeyFileError) {
      ctx.log({ ...entry, outcome: 'key refused', detail: e.message })
      return failure(e.message, { status: null, detail: e.message })
    }
    throw e
  }
}

/** An MCP server of the key's tools (one per stdio session, or per HTTP request). */
export function createMcpServer(ctx: McpContext): Server {
  const server = new Server({ name: 'gatehouse', version: VERSION }, { capabilities: { tools: {} } })
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: ctx.tools.map((t) => t.listed) }))
  server.setRequestHandler(CallToolRequestSchema, (request) =>
    callTool(ctx, request.params.name, (request.params.arguments ?? {}) as Json),
  )
  return server
}
