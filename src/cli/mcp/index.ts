import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { ApiClient } from '../api'
import { EXIT, type ExitCode } from '../exit-codes'
import { KeyFileError, MachineKeyAuth, type MachineKeyAuthOptions } from '../key-auth'
import { TOOLS } from './catalog'
import { createMcpServer, type McpContext } from './server'
import { allows, buildTools } from './tools'

const KEY_PATH_ENV = 'SERVICE_MACHINE_KEY_PATH'
/** Exchange again this long before the token expires (tests shorten a token's life with it). */
const REFRESH_ENV = 'GATEHOUSE_MCP_REFRESH_BEFORE_MS'

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost'])
const DEFAULT_PORT = 8765

/** The options of `gatehouse mcp`, as commander read them. */
interface McpOptions {
  http?: boolean
  port?: string
  host?: string
}

const fail = (message: string, code: ExitCode): ExitCode => {
  console.error(`gatehouse mcp: ${message}`)
  return code
}

/** The control plane's origin (and any path prefix) from the key file's token_url. */
function apiBaseOf(tokenUrl: string): string {
  const url = new URL(tokenUrl)
  return `${url.origin}${url.pathname.replace(/\/v1\/auth\/token\/?$/, '')}`
}

/**
 * `gatehouse mcp`: reads the key file, exchanges it before serving (a missing, unreadable,
 * revoked or expired key ends here, within seconds, naming the file and why), and serves the
 * tools its granted scopes allow until the client goes away.
 */
export async function runMcp(options: McpOptions, env: Record<string, string | undefined>): Promise<number> {
  const host = options.host ?? '127.0.0.1'
  const port = Number(options.port ?? DEFAULT_PORT)
  if (!options.http && (options.port || options.host))
    return fail('--port and --host go with --http', EXIT.USAGE)
  // The server acts with the key's power: only this machine may reach it.
  if (!LOOPBACK.has(host)) return fail(`--host ${host} is not a loopback address; use 127.0.0.1`, EXIT.USAGE)
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    return fail(`--port ${options.port} is not a port`, EXIT.USAGE)
  const keyPath = env[KEY_PATH_ENV]
  if (!keyPath) return fail(`set ${KEY_PATH_ENV} to the path of a machine key file`, EXIT.USAGE)
  const refreshBeforeMs = env[REFRESH_ENV] ? Number(env[REFRESH_ENV]) : undefined
  if (refreshBeforeMs !== undefined && !(refreshBeforeMs >= 0))
    return fail(`${REFRESH_ENV} must be a number of milliseconds`, EXIT.USAGE)

  let ctx: McpContext
  let auth: MachineKeyAuth
  try {
    ;({ ctx, auth } = await openMcpContext(keyPath, { refreshBeforeMs }))
  } catch (e) {
    if (e instanceof KeyFileError) return fail(e.message, EXIT.NOT_AUTHENTICATED)
    throw e
  }
  console.error(
    `gatehouse mcp: ${auth.describe()} on workspace ${ctx.workspaceId}, scopes ${auth.scope}: ${ctx.tools.length} tools`,
  )
  return options.http ? serveHttp(ctx, host, port) : serveStdio(ctx)
}

/**
 * What a connect does before the first message: reads the key file, exchanges it (KeyFileError
 * when either fails), and keeps the tools its granted scopes allow.
 */
export async function openMcpContext(
  keyPath: string,
  opts: MachineKeyAuthOptions = {},
): Promise<{ ctx: McpContext; auth: MachineKeyAuth }> {
  const auth = new MachineKeyAuth(keyPath, opts)
  await auth.exchange()
  const scopes = (auth.scope ?? '').split(' ').filter(Boolean)
  const ctx: McpContext = {
    tools: buildTools(TOOLS).filter((tool) => allows(scopes, tool.spec.needs)),
    api: new ApiClient({ baseUrl: apiBaseOf(auth.file.token_url), auth }),
    workspaceId: auth.file.workspace_id,
    actor: `key:${auth.file.key_id}`,
    log: (line) => console.error(JSON.stringify(line)),
  }
  return { ctx, auth }
}

/** One session over stdin and stdout, until the client closes stdin. */
async function serveStdio(ctx: McpContext): Promise<number> {
  const server = createMcpServer(ctx)
  const ended = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve)
    process.stdin.once('close', resolve)
    server.onclose = resolve
  })
  await server.connect(new StdioServerTransport())
  await ended
  await server.close()
  return EXIT.OK
}

/**
 * Streamable HTTP on a loopback address, stateless: each POST to /mcp gets a server and a
 * transport of its own (the tools are the same for every client: they are the key's), answered
 * as JSON. Host headers other than this address are refused (DNS rebinding).
 */
async function serveHttp(ctx: McpContext, host: string, port: number): Promise<number> {
  let allowedHosts: string[] = []
  const http = Bun.serve({
    hostname: host,
    port,
    async fetch(request) {
      if (new URL(request.url).pathname !== '/mcp') return new Response('Not Found', { status: 404 })
      const transport = new WebStandardStreamableHTTPServerTransport({
        enableJsonResponse: true,
        enableDnsRebindingProtection: true,
        allowedHosts,
      })
      const server = createMcpServer(ctx)
      await server.connect(transport)
      try {
        return await transport.handleRequest(request)
      } finally {
        await server.close()
      }
    },
  })
  const where = host === '::1' ? `[::1]:${http.port}` : `${host}:${http.port}`
  allowedHosts = [where, `localhost:${http.port}`, `127.0.0.1:${http.port}`]
  console.error(`gatehouse mcp: serving Streamable HTTP at http://${where}/mcp`)
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve)
    process.once('SIGTERM', resolve)
  })
  await http.stop()
  return EXIT.OK
}
