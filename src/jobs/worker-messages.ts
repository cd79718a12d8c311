import type { Config } from '../config'

/** Messages from the main thread to a job worker. */
export type ToWorker =
  | {
      type: 'init'
      workerId: string
      config: Omit<Config, 'secretKey'> & { secretKey: string }
      /** Extra modules exporting `handlers: JobHandler[]` (tests add kinds this way). */
      handlerModules: string[]
      concurrency?: number
    }
  /** Run every job due now; the `idle` answer carries `id` once they ran. */
  | { type: 'tick'; id: number }

export type FromWorker = { type: 'ready' } | { type: 'idle'; id: number } | { type: 'error'; message: string }
