// The job kind of the job-claims scenario, loaded into real worker threads through `handlerModules`
// (serve-with-bench-jobs.ts): it does nothing, so what is measured is the queue itself (claim, run,
// record), not a handler.
import type { JobHandler } from '../../../src/jobs/runner'

export const BENCH_JOB_KIND = 'bench.noop'

export const handlers: JobHandler[] = [{ kind: BENCH_JOB_KIND, run() {} }]
