#!/usr/bin/env bun
import { loadConfig, loadListenConfig, StartupError, VERSION } from './config'
import { migrate, openDb } from './db/client'
import { checkHealth } from './features/health/check'

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
  healthcheck  exit 0 when the server on HOST:PORT answers /healthz with 200, else 1
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
      const db = openDb(config.databasePath)
      const count = migrate(db)
      db.$client.close()
      console.log(`migrations applied (${count} known) to ${config.databasePath}`)
      return 0
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
    case 'serve': {
      const config = loadConfig()
      // Loaded only to serve: `version` and `migrate` stay fast and free of the identity plane.
      const { startServer } = await import('./server')
      const server = await startServer(config, { workerUrl: WORKER_URL })
      const shutdown = async () => {
        await server.stop()
        process.exit(0)
      }
      process.on('SIGINT', shutdown)
      process.on('SIGTERM', shutdown)
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
