import { freePort } from '../../scripts/free-port'
import { loadConfig } from '../../src/config'
import type { Extending } from '../../src/identity'
import { type RunningServer, startServer } from '../../src/server'
import type { ManualClock } from '../../src/shared/clock'
import { createLogger } from '../../src/shared/logger'
import { tempDir } from './core'
import { TEST_RATE_LIMITS } from './limits'
import { storeEnv } from './postgres'

export const WORKER_URL = new URL('../../src/jobs/worker.ts', import.meta.url)

export { freePort }

export interface TestServer extends RunningServer {
  baseUrl: string
  logLines: Record<string, unknown>[]
}

export interface TestServerOptions {
  /** Modules exporting `handlers: JobHandler[]`, run beside (or instead of) the product's kinds. */
  handlerModules?: string[]
  /**
   * The server's clock. Jobs then run in process, with this clock: turn it, then `tick()` to run
   * what fell due. Start it at the real time when OIDC flows run: oidc-provider reads Date.now.
   */
  clock?: ManualClock
  /** Jobs on the main thread, on the system clock: the handlers of `handlerModules` share the test's memory. */
  inProcessJobs?: boolean
  /** How often the node lock is checked on PostgreSQL (ServerOptions.nodeLockCheckMs). */
  nodeLockCheckMs?: number
  /** A throwaway feature's identity extension, composed after the product's (ServerOptions.identity). */
  identity?: Extending[]
}

/**
 * A real server on a free loopback port with BASE_URL matching it and a fresh DATA_DIR. Its jobs
 * run in worker threads, as `gatehouse serve` runs them, unless the test brings a clock.
 */
export async function startTestServer(
  env: Record<string, string> = {},
  dataDir = tempDir(),
  opts: TestServerOptions = {},
): Promise<TestServer> {
  const port = await freePort()
  const baseUrl = `http://127.0.0.1:${port}`
  const config = loadConfig({
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: baseUrl,
    LOG_LEVEL: 'info',
    ...TEST_RATE_LIMITS,
    ...(await storeEnv(dataDir)),
    ...env,
  })
  const logLines: Record<string, unknown>[] = []
  const log = createLogger('info', (line) => logLines.push(JSON.parse(line)))
  const server = await startServer(config, {
    workerUrl: WORKER_URL,
    log,
    handlerModules: opts.handlerModules,
    clock: opts.clock,
    inProcessJobs: opts.inProcessJobs ?? opts.clock !== undefined,
    nodeLockCheckMs: opts.nodeLockCheckMs,
    identity: opts.identity,
  })
  return { ...server, baseUrl: config.baseUrl, logLines }
}
