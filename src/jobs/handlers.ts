import type { Core } from '../core'
import { jobHandlers } from './registry'
import type { JobHandler } from './runner'

/** The product's handlers plus those of extra modules (each exporting `handlers`). */
export async function registryFor(modules: string[]): Promise<JobHandler<Core>[]> {
  const extra: JobHandler<Core>[] = []
  for (const path of modules) {
    const mod = (await import(path)) as { handlers: JobHandler<Core>[] }
    extra.push(...mod.handlers)
  }
  return [...(jobHandlers as JobHandler<Core>[]), ...extra]
}
