import type { Core } from '../../core'
import { provisionWorkspace, teardownWorkspace } from '../../features/workspaces/provisioning'
import { PROVISION_JOB, TEARDOWN_JOB } from '../../features/workspaces/service'
import type { JobHandler } from '../runner'

type Payload = { workspaceId: string }

/** Provisioning: short backoff, because a user is watching the status fragment. */
export const workspaceProvision: JobHandler<Core, Payload> = {
  kind: PROVISION_JOB,
  run: (p, core, job) =>
    provisionWorkspace(core, p.workspaceId, { lastAttempt: job.attempts >= job.max_attempts }),
  backoffMs: (attempt) => attempt * 1000,
}

export const workspaceTeardown: JobHandler<Core, Payload> = {
  kind: TEARDOWN_JOB,
  run: (p, core) => teardownWorkspace(core, p.workspaceId),
}
