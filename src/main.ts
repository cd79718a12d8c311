#!/usr/bin/env bun
// First: @simplewebauthn/server's X.509 parser (tsyringe) needs the Reflect metadata polyfill loaded
// before it, and the compiled executable's bundle would otherwise evaluate tsyringe first.
import 'reflect-metadata'
import { loadConfig, loadListenConfig, loadSqliteLocation, StartupError, VERSION } from './config'
import { migrate, openStore } from './db/client'
import { checkHealth } from './healthcheck'

// In the compiled executable the worker is a second entrypoint beside this one in Bun's embedded
// file system; with --bytecode, import.meta.url keeps the build-time path, so go by Bun.main.
const WORKER_URL = Bun.main.startsWith('/$bunfs/')
  ? new URL('./jobs/worker.js', `file://${Bun.main}`)
  : new URL('./jobs/worker.ts', import.meta.url)

const USAGE = `gatehouse ${VERSION}

Usage: gatehouse [command]

Commands:
  serve        start the server (default)
  migrate      apply database migrations and exit
  store copy --to postgres://…
               copy this stopped SQLite store (DATA_DIR) into an empty PostgreSQL database
  healthcheck  exit 0 when the server on HOST:PORT answers /healthz with 200, else 1
  mcp [--http [--port N]]
               a Model Context Protocol server for agents, acting with the machine key at
               SERVICE_MACHINE_KEY_PATH (stdio, or Streamable HTTP on 127.0.0.1)
  version      print the version
`

async function main(argv: string[]): Promise<number> {
  const command = argv[0] ?? 'serve'
  switch (command) {
    case 'version':
    case '--version':
      console.log(VERSION)
      return 0
    case 'help':
    case '--help':
    case '-h':
      console.log(USAGE)
      return 0
    case 'migrate': {
      const config = loadConfig()
      const store = openStore(config)
      try {
        const count = await migrate(store)
        console.log(
          `migrations applied (${count} known) to ${config.databaseUrl ? 'PostgreSQL' : config.databasePath}`,
        )
      } finally {
        await store.close()
      }
      return 0
    }
    case 'store': {
      const to = argv[1] === 'copy' && argv[2] === '--to' ? argv[3] : undefined
      if (!to || argv.length !== 4) {
        console.error(
          `gatehouse: usage: gatehouse store copy --to postgres://user:password@host:port/database`,
        )
        return 2
      }
      const { copyStoreCommand } = await import('./db/copy-command')
      return copyStoreCommand(loadSqliteLocation(), to)
    }
    case 'healthcheck': {
      // Only HOST and PORT: loadConfig would create DATA_DIR and a key file, and a probe may run
      // without write access. Exit 1, not 2: Docker reserves 2 in a HEALTHCHECK.
      let reason: string | null
      try {
        reason = await checkHealth(loadListenConfig())
      } catch (e) {
        if (!(e instanceof StartupError)) throw e
        reason = e.message
      }
      if (reason) console.error(`gatehouse: healthcheck failed: ${reason}`)
      return reason ? 1 : 0
    }
    case 'mcp': {
      // Loaded only here: the server's modules stay out of an agent's tool process.
      const { runMcp } = await import('./cli/mcp')
      return runMcp(argv.slice(1), process.env)
    }
    case 'serve': {
      const config = loadConfig()
      // Loaded only to serve: `version` and `migrate` stay fast and free of the identity plane.
      const { startServer } = await import('./server')
      const starting = startServer(config, { workerUrl: WORKER_URL })
      // Listening for signals from the start: a SIGTERM while the node starts stops it cleanly too.
      let stopping = false
      const shutdown = async () => {
        if (stopping) return
        stopping = true
        await (await starting.catch(() => null))?.stop()
        process.exit(0)
      }
      process.on('SIGINT', shutdown)
      process.on('SIGTERM', shutdown)
      await starting
      return -1
    }
    default:
      console.error(`gatehouse: unknown command "${command}"\n\n${USAGE}`)
      return 2
  }
}

// No top-level await: the executable is compiled with --bytecode, which emits CommonJS.
main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code)
  },
  (e) => {
    // A bad environment value or a busy port is one clear line, never a stack trace.
    if (e instanceof StartupError) {
      console.error(`gatehouse: ${e.message}`)
      process.exit(2)
    }
    throw e
  },
)
