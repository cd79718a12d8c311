/// <reference lib="webworker" />
// Bun Worker entry: one SQLite connection and one JobRunner per thread, woken by the main thread.
import { createCore } from '../core'
import type { FromWorker, ToWorker } from './protocol'
import { loadJobHandlers } from './registry'
import { JobRunner } from './runner'

declare const self: Worker

let runner: JobRunner<unknown> | null = null
const post = (msg: FromWorker) => self.postMessage(msg)

self.onmessage = async (event: MessageEvent<ToWorker>) => {
  const msg = event.data
  try {
    if (msg.type === 'init') {
      const config = { ...msg.config, secretKey: Buffer.from(msg.config.secretKey, 'hex') }
      const core = createCore(config)
      const handlers = await loadJobHandlers(msg.handlerModules)
      runner = new JobRunner(core.db, core.clock, core.log, core, handlers, {
        workerId: msg.workerId,
        leaseMs: config.jobLeaseSeconds * 1000,
        concurrency: msg.concurrency,
      })
      post({ type: 'ready' })
    } else if (msg.type === 'tick') {
      await runner?.drain()
      post({ type: 'idle' })
    } else if (msg.type === 'stop') {
      await runner?.drain()
      post({ type: 'stopped' })
    }
  } catch (e) {
    post({ type: 'error', message: e instanceof Error ? e.message : String(e) })
  }
}
