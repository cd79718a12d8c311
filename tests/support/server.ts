import { createServer } from 'node:net'
import { loadConfig } from '../../src/config'
import { type RunningServer, startServer } from '../../src/server'
import type { Clock } from '../../src/shared/clock'
import { createLogger } from '../../src/shared/logger'
import { tempDir } from './core'

export const WORKER_URL = new URL('../../src/jobs/worker.ts', import.meta.url)

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => resolve(port))
    })
  })
}

export interface TestServer extends RunningServer {
  baseUrl: string
  logLines: Record<string, unknown>[]
}

/** A real server on a free loopback port with BASE_URL matching it, fresh DATA_DIR, real workers. */
export async function startTestServer(
  env: Record<string, string> = {},
  dataDir = tempDir(),
  opts: { handlerModules?: string[]; clock?: Clock } = {},
): Promise<TestServer> {
  const port = await freePort()
  const baseUrl = `http://127.0.0.1:${port}`
  const config = loadConfig({
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: baseUrl,
    LOG_LEVEL: 'info',
    ...env,
  })
  const logLines: Record<string, unknown>[] = []
  const log = createLogger('info', (line) => logLines.push(JSON.parse(line)))
  const server = await startServer(config, {
    workerUrl: WORKER_URL,
    log,
    handlerModules: opts.handlerModules,
    clock: opts.clock,
  })
  return { ...server, baseUrl: config.baseUrl, logLines }
}
