import type { Core } from '../core'
import { loadJobHandlers } from './registry'
import { JobRunner } from './runner'

interface ThreadRunnerOptions {
  /** `<node id>:<boot id>:<runner>` (see leases.ts). */
  workerId: string
  /** Extra modules exporting `handlers: JobHandler[]` (tests add kinds this way). */
  handlerModules: string[]
  /** Jobs in flight at once in this runner (deliveries wait on the network, so more than one). */
  concurrency?: number
  /** Told of every job the runner runs. */
  onJob?: () => void
}

/**
 * The one JobRunner of a thread, over that thread's core: each job worker builds its own, and the
 * main thread builds one with the server's core when jobs run in process (tests).
 */
export async function threadRunner(core: Core, opts: ThreadRunnerOptions): Promise<JobRunner<Core>> {
  return new JobRunner(core.store, core.clock, core.log, core, await loadJobHandlers(opts.handlerModules), {
    workerId: opts.workerId,
    leaseMs: core.config.jobLeaseSeconds * 1000,
    concurrency: opts.concurrency ?? core.config.jobConcurrency,
    onJob: opts.onJob,
  })
}
