import type { Core } from '../core'
import { type Feature, features, workspaceLifecycle } from '../features'
import { purgeExpiredIdentityRows } from '../identity'
import { purgeFinishedJobs } from '../queue/job-queue'
import { type Purge, purgeExpired } from './purge-expired'
import type { JobHandler } from './runner'

/** What the periodic purge removes beyond the features' own: the identity plane's and the queue's rows. */
const CORE_PURGES: Purge[] = [purgeExpiredIdentityRows, purgeFinishedJobs]

/** Every job kind of these features (each defined in its feature's `jobs.ts`), and the purge. */
function jobHandlersOf(list: Feature[]): JobHandler<Core>[] {
  const lifecycle = workspaceLifecycle(list)
  const purges = [...CORE_PURGES, ...list.flatMap((f) => f.purges ?? [])]
  return [...list.flatMap((f) => f.jobs?.(lifecycle) ?? []), purgeExpired(purges)] as JobHandler<Core>[]
}

/** Every job kind the product runs. */
export const jobHandlers = jobHandlersOf(features)

/** The product's handlers plus those of extra modules, each exporting `handlers` (tests add kinds this way). */
export async function loadJobHandlers(modules: string[]): Promise<JobHandler<Core>[]> {
  const extra: JobHandler<Core>[] = []
  for (const path of modules) {
    const mod = (await import(path)) as { handlers: JobHandler<Core>[] }
    extra.push(...mod.handlers)
  }
  return [...jobHandlers, ...extra]
}
