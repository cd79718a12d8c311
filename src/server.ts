import { createApp, createFetch } from './app'
import { type Config, StartupError } from './config'
import { type Core, type CoreOptions, createCore } from './core'
import { migrate } from './db/client'
import { acquireNodeLock, type NodeLock, ServeLockTaken } from './db/serve-lock'
import { isStoreUnavailable, loggable } from './db/store'
import { features } from './features'
import {
  composeExtensions,
  type Extending,
  type Extensions,
  type IdentityPlane,
  startIdentityPlane,
} from './identity'
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
  /** How often the node lock is checked on PostgreSQL (default NODE_LOCK_CHECK_MS); tests shorten it. */
  nodeLockCheckMs?: number
  /**
   * Identity extensions composed after the features' (tests lend the engine a throwaway feature's
   * in-process); `gatehouse serve` never passes any.
   */
  identity?: Extending[]
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

/** What the features lend the identity engine (which imports none of them), composed once. */
export const identityExtensions = (core: Core, list: readonly Extending[] = features): Extensions =>
  composeExtensions(core, list)

/** Migrates the store, starts the job workers, then listens: what `gatehouse serve` does. */
export async function startServer(config: Config, opts: ServerOptions): Promise<RunningServer> {
  let jobs: JobRuntime | null = null
  const core = createCore(config, { ...opts, wakeJobs: () => jobs?.wake() })
  // Composed before the lock is taken or the store migrated: an extension the engine refuses stops
  // the start with only the store to close.
  let extensions: Extensions
  try {
    extensions = identityExtensions(core, [...features, ...(opts.identity ?? [])])
  } catch (e) {
    await core.store.close()
    throw e
  }
  let nodeLock: NodeLock | null = null
  try {
    nodeLock = await acquireNodeLock(core.store, config.dataDir, config.nodeId, {
      log: core.log,
      checkEveryMs: opts.nodeLockCheckMs,
    })
    await migrate(core.store)
    // Changes to instances made elsewhere reach this node's views: other nodes' (PostgreSQL), or
    // this node's job threads' (SQLite).
    await core.instances.listen()
  } catch (e) {
    await nodeLock?.release()
    await core.store.close()
    if (e instanceof ServeLockTaken) throw new StartupError(e.message)
    if (isStoreUnavailable(e)) throw new StartupError(`cannot reach the database: ${(e as Error).message}`)
    throw e
  }
  const identity = await startIdentityPlane(core, extensions)
  const app = createApp(core, { identity, nodeLock })
  // The node lock is ours, so no live process runs jobs under this node id: those still marked
  // running by this node's earlier boot were cut off with it. Asked again now: it may have been
  // lost since (a dropped connection, and another process with this node id took it).
  const bootId = newBootId()
  const requeued = (await nodeLock.confirm())
    ? await requeueEarlierBootJobs(core.db, core.clock, config.nodeId, bootId)
    : 0
  if (requeued > 0)
    core.log.info('requeued jobs of an earlier boot', { count: requeued, node_id: config.nodeId })
  const runtime: JobRuntime = opts.inProcessJobs
    ? new InProcessJobs(core, { handlerModules: opts.handlerModules, bootId })
    : new WorkerPool(config, core.log, {
        workerUrl: opts.workerUrl,
        handlerModules: opts.handlerModules,
        bootId,
      })
  // Ready before the port opens: a node that answers /healthz runs jobs too.
  // Enqueues wake it from here on (the core was built before it).
  jobs = runtime
  await runtime.whenReady()
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
        core.log.error('unhandled error at the front door', loggable(e))
        return Response.json(
          { detail: 'Internal Server Error' },
          { status: 500, headers: baseSecurityHeaders(config.baseUrl.startsWith('https:')) },
        )
      },
    })
  } catch (e) {
    await runtime.stop()
    await nodeLock.release()
    await core.store.close()
    if ((e as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new StartupError(`port ${config.port} is already in use`)
    }
    throw e
  }
  // Routes read the client address (`server.requestIP`) through Elysia's context.
  app.server = server
  const url = `http://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${server.port}`
  core.log.info('listening', {
    url,
    base_url: config.baseUrl,
    store: core.store.dialect,
    ...(core.store.dialect === 'sqlite' ? { data_dir: config.dataDir } : { node_id: config.nodeId }),
  })
  runtime.wake()
  const schedule = startSchedule(core)
  return {
    core,
    identity,
    url,
    port: server.port ?? config.port,
    async tick() {
      await schedule.tick()
      await runtime.drain()
    },
    async stop() {
      schedule.stop()
      await server.stop(true)
      await runtime.stop()
      core.instances.close()
      await nodeLock.release()
      await core.store.close()
    },
  }
}
