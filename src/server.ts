import { createApp, createFetch } from './app'
import type { Config } from './config'
import { type Core, type CoreOptions, createCore } from './core'
import { migrate } from './db/client'
import { type IdentityPlane, startIdentityPlane } from './identity'
import { WorkerPool } from './jobs/pool'
import { startSchedule } from './jobs/schedule'

export interface ServerOptions extends CoreOptions {
  /** URL of the job worker entry (src/jobs/worker.ts); resolved by the caller's entry point. */
  workerUrl: URL | string
  handlerModules?: string[]
}

export interface RunningServer {
  core: Core
  identity: IdentityPlane
  url: string
  port: number
  stop(): Promise<void>
}

/** Migrates the store, starts the job workers and listens: what `gatehouse serve` does. */
export async function startServer(config: Config, opts: ServerOptions): Promise<RunningServer> {
  let pool: WorkerPool | null = null
  const core = createCore(config, { ...opts, wakeJobs: () => pool?.wake() })
  migrate(core.db)
  pool = new WorkerPool(config, core.log, { workerUrl: opts.workerUrl, handlerModules: opts.handlerModules })
  await pool.whenReady()
  const identity = await startIdentityPlane(core)
  const app = createApp(core, { identity })
  // reusePort false: a stale second server must fail to bind rather than silently share the port.
  const server = Bun.serve({
    hostname: config.host,
    port: config.port,
    reusePort: false,
    fetch: createFetch(core, app, { identity }),
  })
  // Routes read the client address (`server.requestIP`) through Elysia's context.
  app.server = server
  const url = `http://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${server.port}`
  core.log.info('listening', { url, base_url: config.baseUrl, data_dir: config.dataDir })
  pool.wake()
  const schedule = startSchedule(core)
  return {
    core,
    identity,
    url,
    port: server.port ?? config.port,
    async stop() {
      schedule.stop()
      await server.stop(true)
      await pool?.stop()
      core.db.$client.close()
    },
  }
}
