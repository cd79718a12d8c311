import type { Config } from '../config'

/** Messages from the main thread to a job worker. */
export type ToWorker =
  | {
      type: 'init'
      workerId: string
      config: Omit<Config, 'secretKey'> & { secretKey: string }
      /** Extra modules exporting `handlers: JobHandler[]` (tests add kinds this way). */
      handlerModules: string[]
      concurrency: number
    }
  | { type: 'tick' }
  | { type: 'stop' }

export type FromWorker =
  | { type: 'ready' }
  | { type: 'idle' }
  | { type: 'stopped' }
  | { type: 'error'; message: string }
