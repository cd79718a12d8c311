/// <reference lib="webworker" />
// Bun Worker entry: one SQLite connection and one JobRunner per thread, woken by the main thread.
// First: @simplewebauthn/server's X.509 parser (tsyringe) needs the Reflect metadata polyfill loaded
// before it, and the compiled executable's bundle would otherwise evaluate tsyringe first.
import 'reflect-metadata'
import { createCore } from '../core'
import { idleCollector } from '../shared/gc-pacing'
import type { JobRunner } from './runner'
import { threadRunner } from './thread-runner'
import type { FromWorker, ToWorker } from './worker-messages'

declare const self: Worker

let runner: JobRunner<unknown> | null = null
// A burst of jobs (provisioning's keys, deliveries) leaves this thread's heap grown with garbage
// until something collects it: once the jobs stop, one full collection (gc-pacing.ts).
const settle = idleCollector()
const post = (msg: FromWorker) => self.postMessage(msg)

self.onmessage = async (event: MessageEvent<ToWorker>) => {
  const msg = event.data
  try {
    if (msg.type === 'init') {
      const config = { ...msg.config, secretKey: Buffer.from(msg.config.secretKey, 'hex') }
      // A worker's own connections: two are plenty for its runner (DATABASE_POOL_SIZE is the main thread's).
      runner = await threadRunner(createCore(config, { poolSize: 2 }), { ...msg, onJob: () => settle() })
      post({ type: 'ready' })
    } else if (msg.type === 'tick') {
      try {
        await runner?.drain()
      } finally {
        post({ type: 'idle', id: msg.id })
      }
    }
  } catch (e) {
    post({ type: 'error', message: e instanceof Error ? e.message : String(e) })
  }
}
