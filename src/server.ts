import { createApp, createFetch } from './app'
import { type Config, StartupError } from './config'
import { type Core, type CoreOptions, createCore } from './core'
import { migrate } from './db/client'
import { acquireServeLock, ServeLockTaken } from './db/serve-lock'
import { appClientSource } from './features/apps/client-source'
import { endAccountSessions } from './features/auth/sessions'
import { sendMail } from './features/mail/service'
import { workspaceActive } from './features/workspaces/instance-state'
import { type IdentityDeps, type IdentityPlane, startIdentityPlane } from './identity'
import { InProcessJobs } from './jobs/in-process'
import { newBootId, requeueEarlierBootJobs } from './jobs/leases'
import { type JobRuntime, WorkerPool } from './jobs/pool'
import { startSchedule } from './jobs/schedule'
import { baseSecurityHeaders } from './shared/security-headers'

export interface ServerOptions extends CoreOptions {
  /** URL of the job worker entry (src/jobs/worker.ts); resolved by the caller's entry point. */
  workerUrl: URL | string
  handlerModules?: string[]
  /**
   * Runs the jobs on the main thread with this server's core, and so its clock, instead of in
   * worker threads (which build their own core on the system clock). For tests that turn a
   * ManualClock; `gatehouse serve` always uses the workers.
   */
  inProcessJobs?: boolean
}

export interface RunningServer {
  core: Core
  identity: IdentityPlane
  url: string
  port: number
  /**
   * Does now what the timers do: enqueues the periodic slots due by the core's clock and runs
   * every job due; resolves once they ran. Tests call it after turning a ManualClock.
   */
  tick(): Promise<void>
  stop(): Promise<void>
}

/** What the identity plane needs of the features: it imports none of them. */
export const identityDeps = (core: Core): IdentityDeps => ({
  sendMail,
  clients: appClientSource(core),
  workspaceActive: workspaceActive(core),
  endAccountSessions,
})

/** Migrates the store, listens, then starts the job workers: what `gatehouse serve` does. */
export async function startServer(config: Config, opts: ServerOptions): Promise<RunningServer> {
  let serveLock: { release(): void }
  try {
    serveLock = acquireServeLock(config.dataDir)
  } catch (e) {
    if (e instanceof ServeLockTaken) throw new StartupError(e.message)
    throw e
  }
  let jobs: JobRuntime | null = null
  const core = createCore(config, { ...opts, wakeJobs: () => jobs?.wake() })
  migrate(core.db)
  const identity = await startIdentityPlane(core, identityDeps(core))
  const app = createApp(core, { identity })
  let server: ReturnType<typeof Bun.serve>
  try {
    // reusePort false: a stale second server must fail to bind rather than silently share the port.
    server = Bun.serve({
      hostname: config.host,
      port: config.port,
      reusePort: false,
      // Never Bun's development error page (it shows source and paths): a last-resort JSON 500.
      development: false,
      fetch: createFetch(core, app, { identity }),
      error(e) {
        core.log.error('unhandled error at the front door', { error: e.message, stack: e.stack })
        return Response.json(
          { detail: 'Internal Server Error' },
          { status: 500, headers: baseSecurityHeaders(config.baseUrl.startsWith('https:')) },
        )
      },
    })
  } catch (e) {
    core.db.$client.close()
    serveLock.release()
    if ((e as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new StartupError(`port ${config.port} is already in use`)
    }
    throw e
  }
  // Routes read the client address (`server.requestIP`) through Elysia's context.
  app.server = server
  // The serve lock is ours, so no other process runs this store's jobs: those still marked running
  // by this node's earlier boot were cut off with it.
  const bootId = newBootId()
  const requeued = requeueEarlierBootJobs(core.db, core.clock, config.nodeId, bootId)
  if (requeued > 0)
    core.log.info('requeued jobs of an earlier boot', { count: requeued, node_id: config.nodeId })
  const runtime: JobRuntime = opts.inProcessJobs
    ? new InProcessJobs(core, { handlerModules: opts.handlerModules, bootId })
    : new WorkerPool(config, core.log, {
        workerUrl: opts.workerUrl,
        handlerModules: opts.handlerModules,
        bootId,
      })
  // Enqueues wake it from here on (the core was built before it).
  jobs = runtime
  await runtime.whenReady()
  const url = `http://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${server.port}`
  core.log.info('listening', { url, base_url: config.baseUrl, data_dir: config.dataDir })
  runtime.wake()
  const schedule = startSchedule(core)
  return {
    core,
    identity,
    url,
    port: server.port ?? config.port,
    tick() {
      schedule.tick()
      return runtime.drain()
    },
    async stop() {
      schedule.stop()
      await server.stop(true)
      await runtime.stop()
      core.db.$client.close()
      serveLock.release()
    },
  }
}
