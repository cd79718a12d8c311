import { Cron } from 'croner'
import type { Config } from '../config'
import type { Logger } from '../shared/logger'
import { leaseOwner } from './leases'
import type { FromWorker, ToWorker } from './worker-messages'

/** What runs the durable jobs of a server: worker threads (`gatehouse serve`) or its main thread (tests). */
export interface JobRuntime {
  whenReady(): Promise<void>
  /** Starts on the jobs due now without waiting for them (after an enqueue, on every tick). */
  wake(): void
  /** Runs every job due now; resolves once they ran. */
  drain(): Promise<void>
  stop(): Promise<void>
}

interface WorkerPoolOptions {
  /** URL of src/jobs/worker.ts (resolved by the entry point so the compiled binary finds it). */
  workerUrl: URL | string
  handlerModules?: string[]
  concurrency?: number
  /** This start's boot id: workers claim jobs as `<node id>:<boot id>:w<n>`. */
  bootId: string
}

/** Due retries and expired leases are picked up within a second of falling due. */
export const everySecond = (wake: () => void): Cron => new Cron('* * * * * *', { protect: true }, wake)

/**
 * Bun Worker threads that run the durable job queue, each with its own core (and so the system
 * clock). A croner tick wakes them every second; `wake()` after an enqueue starts work at once.
 */
export class WorkerPool implements JobRuntime {
  private readonly workers: Worker[] = []
  private readonly cron: Cron
  private readonly ready: Promise<void>
  /** Drains waiting for their tick's `idle` answers: how many are still to come. */
  private readonly drains = new Map<number, { left: number; done: () => void }>()
  private ticks = 0

  constructor(config: Config, log: Logger, opts: WorkerPoolOptions) {
    const { secretKey, ...rest } = config
    const readies: Promise<void>[] = []
    for (let i = 0; i < config.jobWorkers; i++) {
      const worker = new Worker(opts.workerUrl)
      readies.push(
        new Promise((resolve, reject) => {
          worker.addEventListener('message', (e: MessageEvent<FromWorker>) => {
            if (e.data.type === 'ready') resolve()
            if (e.data.type === 'idle') this.answered(e.data.id)
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
        concurrency: opts.concurrency,
      }
      worker.postMessage(init)
      this.workers.push(worker)
    }
    this.ready = Promise.all(readies).then(() => {})
    this.cron = everySecond(this.wake)
  }

  whenReady(): Promise<void> {
    return this.ready
  }

  wake = (): void => {
    this.postTick()
  }

  /** A tick every worker answers with `idle` once the jobs it found due have run. */
  drain(): Promise<void> {
    const id = this.postTick()
    return new Promise((done) => this.drains.set(id, { left: this.workers.length, done }))
  }

  async stop(): Promise<void> {
    this.cron.stop()
    for (const w of this.workers) w.terminate()
    // Terminated workers answer no more ticks.
    for (const { done } of this.drains.values()) done()
    this.drains.clear()
  }

  private answered(id: number) {
    const drain = this.drains.get(id)
    if (!drain || --drain.left > 0) return
    this.drains.delete(id)
    drain.done()
  }

  private postTick(): number {
    const id = ++this.ticks
    for (const w of this.workers) w.postMessage({ type: 'tick', id } satisfies ToWorker)
    return id
  }
}
