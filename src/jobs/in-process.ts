import { AsyncLocalStorage } from 'node:async_hooks'
import type { Cron } from 'croner'
import type { Core } from '../core'
import { leaseOwner } from './leases'
import { everySecond, type JobRuntime } from './pool'
import type { JobRunner } from './runner'
import { threadRunner } from './thread-runner'

interface InProcessJobsOptions {
  handlerModules?: string[]
  /** This start's boot id: the runner claims jobs as `<node id>:<boot id>:main`. */
  bootId: string
}

/**
 * The job runner on the main thread, over the server's own core: a test that turns its
 * ManualClock sees job schedules, retries and backoff follow it, and test handlers share the
 * test's memory. Woken like the worker threads: after an enqueue and by the tick every second.
 */
export class InProcessJobs implements JobRuntime {
  private runner: JobRunner<Core> | null = null
  private readonly ready: Promise<void>
  private readonly cron: Cron
  private stopped = false
  /** The runner's latest drain: concurrent drains share it, so it covers every job in flight. */
  private running: Promise<void> = Promise.resolve()
  /**
   * The async context of the runner's start: a drain woken by an enqueue inside a request runs in
   * it, not in that request's (its identity instance, its brand), as a worker thread's would.
   */
  private readonly outside = AsyncLocalStorage.snapshot()

  constructor(
    private readonly core: Core,
    opts: InProcessJobsOptions,
  ) {
    this.ready = threadRunner(core, {
      workerId: leaseOwner(core.config.nodeId, opts.bootId, 'main'),
      handlerModules: opts.handlerModules ?? [],
    }).then((runner) => {
      this.runner = runner
    })
    this.cron = everySecond(this.wake)
  }

  whenReady(): Promise<void> {
    return this.ready
  }

  wake = (): void => {
    this.drain().catch((e) => this.core.log.error('job runner failed', { error: String(e) }))
  }

  drain(): Promise<void> {
    const runner = this.runner
    if (runner && !this.stopped) this.running = this.outside(() => runner.drain())
    return this.running
  }

  /** Claims nothing more and waits for the jobs in flight: they use the store the server closes next. */
  async stop(): Promise<void> {
    this.cron.stop()
    this.stopped = true
    // A failed drain was already reported to its caller (wake logs it).
    await this.running.catch(() => {})
  }
}
