import type { Core } from '../../core'
import type { JobHandler } from '../../jobs/runner'
import type { ProvisionStep, TeardownStep } from '../feature'
import { provisionWorkspace, teardownWorkspace } from './provisioning'

export const PROVISION_JOB = 'workspace.provision'
export const TEARDOWN_JOB = 'workspace.teardown'

type Payload = { workspaceId: string }

/** Provisioning runs every feature's steps (features/index.ts); short backoff, a user is watching. */
export const workspaceProvision = (steps: ProvisionStep[]): JobHandler<Core, Payload> => ({
  kind: PROVISION_JOB,
  run: (p, core, job) =>
    provisionWorkspace(core, p.workspaceId, { lastAttempt: job.attempts >= job.max_attempts, steps }),
  backoffMs: (attempt) => attempt * 1000,
})

/** Deletion runs the teardown step of every feature that holds workspace data (features/index.ts). */
export const workspaceTeardown = (steps: TeardownStep[]): JobHandler<Core, Payload> => ({
  kind: TEARDOWN_JOB,
  run: (p, core) => teardownWorkspace(core, p.workspaceId, steps),
})
