import type { Command } from 'commander'
import { examples } from '../command'

/**
 * `gatehouse mcp`: the MCP tool server (src/cli/mcp), loaded only when run so the rest of the CLI
 * stays light. It serves until the client goes away; `exit` records its exit code.
 */
export function registerMcp(program: Command, exit: (code: number) => void): void {
  const mcp = program
    .command('mcp')
    .description(
      'Serve the control plane to an agent as MCP tools, with the machine key at SERVICE_MACHINE_KEY_PATH',
    )
    .option('--http', 'serve Streamable HTTP on a loopback address instead of stdio')
    .option('--port <port>', 'the port of --http (default 8765)')
    .option('--host <host>', 'the loopback address of --http (default 127.0.0.1)')
    .action(async (opts: { http?: boolean; port?: string; host?: string }) => {
      const { runMcp } = await import('../mcp')
      exit(await runMcp(opts, process.env))
    })
  mcp.addHelpText(
    'before',
    `A Model Context Protocol server acting with the machine key whose key file SERVICE_MACHINE_KEY_PATH
names. It exchanges the key at start (and again before each token expires) and lists the tools its
scopes allow. Over stdio by default; --http serves Streamable HTTP at http://127.0.0.1:8765/mcp
(loopback only).
`,
  )
  examples(
    mcp,
    'SERVICE_MACHINE_KEY_PATH=./gatehouse-key.json gatehouse mcp',
    'SERVICE_MACHINE_KEY_PATH=./gatehouse-key.json gatehouse mcp --http --port 8765',
  )
}
