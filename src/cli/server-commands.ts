import type { Command } from 'commander'
import { loadConfig, loadListenConfig, loadSqliteLocation, StartupError, VERSION } from '../config'
import { migrate, openStore } from '../db/client'
import { checkHealth } from '../healthcheck'
import { examples } from './command'
import { registerMcp } from './commands/mcp'

/**
 * The server's own commands beside the API client's (src/cli/program.ts). `exit` records a
 * command's exit code; `serve` records none and keeps the process.
 */
export function addServerCommands(
  program: Command,
  workerUrl: URL,
  exit: (code: number) => void,
  keepAlive: () => void,
): void {
  const serve = program
    .command('serve')
    .description('Start the server (the default, with no command)')
    .action(async () => {
      const config = loadConfig()
      // Loaded only to serve: `version` and `migrate` stay fast and free of the identity plane.
      const { startServer } = await import('../server')
      const starting = startServer(config, { workerUrl })
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
      keepAlive()
    })
  examples(serve, 'gatehouse serve', 'DATABASE_URL=postgres://… SECRET_KEY=… gatehouse serve')

  const migrateCommand = program
    .command('migrate')
    .description('Apply database migrations and exit')
    .action(async () => {
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
    })
  examples(migrateCommand, 'DATA_DIR=/var/lib/gatehouse gatehouse migrate')

  const store = program.command('store').description('Move a stopped install between stores')
  const copy = store
    .command('copy')
    .description('Copy this stopped SQLite store (DATA_DIR) into an empty PostgreSQL database')
    .requiredOption('--to <url>', 'postgres://user:password@host:port/database')
    .action(async (opts: { to: string }) => {
      const { copyStoreCommand } = await import('../db/copy-command')
      exit(await copyStoreCommand(loadSqliteLocation(), opts.to))
    })
  examples(store, 'gatehouse store copy --to postgres://gatehouse:secret@db:5432/gatehouse')
  examples(copy, 'DATA_DIR=./data gatehouse store copy --to postgres://gatehouse:secret@db:5432/gatehouse')

  const healthcheck = program
    .command('healthcheck')
    .description('Exit 0 when the server on HOST:PORT answers /healthz with 200, else 1')
    .action(async () => {
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
      exit(reason ? 1 : 0)
    })
  examples(healthcheck, 'PORT=8080 gatehouse healthcheck || echo down')

  registerMcp(program, exit)

  examples(
    program
      .command('version')
      .description('Print the version')
      .action(() => console.log(VERSION)),
    'gatehouse version',
  )
}
