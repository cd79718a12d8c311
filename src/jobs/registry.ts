import type { Core } from '../core'
import { deleteWorkspaceEvents } from '../events/emit'
import { deleteWorkspaceApps } from '../features/apps/service'
import { purgeExpiredAuthRows } from '../features/auth/purge'
import { deleteWorkspaceLoginPolicy } from '../features/login-policy/service'
import { mailSend } from '../features/mail/jobs'
import { deleteWorkspaceMail, purgeExpiredMail } from '../features/mail/outbox'
import { workspaceProvision, workspaceTeardown } from '../features/workspaces/jobs'
import type { TeardownStep } from '../features/workspaces/provisioning'
import { deleteInstanceData, purgeExpiredIdentityRows } from '../identity'
import { dropQueuedJobs, purgeFinishedPeriodicJobs } from '../queue/queue'
import { type Purge, purgeExpired } from './maintenance'
import type { JobHandler } from './runner'

type CoreJobHandler = JobHandler<Core, never>

/** What deleting a workspace removes, each part by the feature that owns its rows. */
const WORKSPACE_TEARDOWN: TeardownStep[] = [
  dropQueuedJobs,
  deleteWorkspaceApps,
  deleteWorkspaceLoginPolicy,
  deleteWorkspaceMail,
  deleteWorkspaceEvents,
  deleteInstanceData,
]

/** What the periodic purge removes, each part by the owner of its tables. */
const PURGES: Purge[] = [
  purgeExpiredIdentityRows,
  purgeExpiredAuthRows,
  purgeExpiredMail,
  purgeFinishedPeriodicJobs,
]

/** Every job kind the product runs, each defined in the `jobs.ts` of the feature that owns it. */
export const jobHandlers = [
  workspaceProvision,
  workspaceTeardown(WORKSPACE_TEARDOWN),
  mailSend,
  purgeExpired(PURGES),
] as CoreJobHandler[]

/** The product's handlers plus those of extra modules, each exporting `handlers` (tests add kinds this way). */
export async function loadJobHandlers(modules: string[]): Promise<JobHandler<Core>[]> {
  const extra: JobHandler<Core>[] = []
  for (const path of modules) {
    const mod = (await import(path)) as { handlers: JobHandler<Core>[] }
    extra.push(...mod.handlers)
  }
  return [...(jobHandlers as JobHandler<Core>[]), ...extra]
}
