import { Cron } from 'croner'
import type { Config } from '../config'
import type { Logger } from '../shared/logger'
import { leaseOwner } from './leases'
import type { FromWorker, ToWorker } from './protocol'

export interface WorkerPoolOptions {
  /** URL of src/jobs/worker.ts (resolved by the entry point so the compiled binary finds it). */
  workerUrl: URL | string
  handlerModules?: string[]
  concurrency?: number
  /** This start's boot id: workers claim jobs as `<node id>:<boot id>:w<n>`. */
  bootId: string
}

/**
 * Bun Worker threads that run the durable job queue. A croner tick wakes them every second
 * (due retries, expired leases); `wake()` after an enqueue starts work at once.
 */
export class WorkerPool {
  private readonly workers: Worker[] = []
  private readonly cron: Cron
  private readonly ready: Promise<void>

  constructor(config: Config, log: Logger, opts: WorkerPoolOptions) {
    const { secretKey, ...rest } = config
    const readies: Promise<void>[] = []
    for (let i = 0; i < config.jobWorkers; i++) {
      const worker = new Worker(opts.workerUrl)
      readies.push(
        new Promise((resolve, reject) => {
          worker.addEventListener('message', (e: MessageEvent<FromWorker>) => {
            if (e.data.type === 'ready') resolve()
            if (e.data.type === 'error') {
              log.error('job worker error', { message: e.data.message })
              reject(new Error(e.data.message))
            }
          })
        }),
      )
      worker.addEventListener('error', (e) => log.error('job worker crashed', { message: e.message }))
      const init: ToWorker = {
        type: 'init',
        workerId: leaseOwner(config.nodeId, opts.bootId, `w${i}`),
        config: { ...rest, secretKey: secretKey.toString('hex') },
        handlerModules: opts.handlerModules ?? [],
        concurrency: opts.concurrency ?? 8,
      }
      worker.postMessage(init)
      this.workers.push(worker)
    }
    this.ready = Promise.all(readies).then(() => {})
    this.cron = new Cron('* * * * * *', { protect: true }, () => this.wake())
  }

  whenReady(): Promise<void> {
    return this.ready
  }

  wake = (): void => {
    for (const w of this.workers) w.postMessage({ type: 'tick' } satisfies ToWorker)
  }

  async stop(): Promise<void> {
    this.cron.stop()
    for (const w of this.workers) w.terminate()
  }
}
