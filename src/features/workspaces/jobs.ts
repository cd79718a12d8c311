import type { Core } from '../../core'
import type { JobHandler } from '../../jobs/runner'
import { provisionWorkspace, type TeardownStep, teardownWorkspace } from './provisioning'

export const PROVISION_JOB = 'workspace.provision'
export const TEARDOWN_JOB = 'workspace.teardown'

type Payload = { workspaceId: string }

/** Provisioning: short backoff, because a user is watching the status fragment. */
export const workspaceProvision: JobHandler<Core, Payload> = {
  kind: PROVISION_JOB,
  run: (p, core, job) =>
    provisionWorkspace(core, p.workspaceId, { lastAttempt: job.attempts >= job.max_attempts }),
  backoffMs: (attempt) => attempt * 1000,
}

/** Deletion runs the teardown steps of every feature that holds workspace data (src/jobs/registry.ts). */
export const workspaceTeardown = (steps: TeardownStep[]): JobHandler<Core, Payload> => ({
  kind: TEARDOWN_JOB,
  run: (p, core) => teardownWorkspace(core, p.workspaceId, steps),
})
