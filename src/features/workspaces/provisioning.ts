import { eq } from 'drizzle-orm'
import type { Core } from '../../core'
import { ensureInstanceKeys } from '../../identity'
import { createDefaultLoginPolicy } from '../login-policy/service'
import { workspaces } from './schema'
import type { Workspace } from './service'

export interface ProvisionStep {
  name: string
  /** Completes "Could not …" in the message a user sees when the step keeps failing. */
  does: string
  run(core: Core, workspace: Workspace): Promise<void> | void
}

/** What an identity instance needs before it may serve. Each step is idempotent. */
export const PROVISION_STEPS: ProvisionStep[] = [
  { name: 'signing-keys', does: 'create the signing keys', run: (core, w) => ensureInstanceKeys(core, w.id) },
  {
    name: 'login-policy',
    does: 'set up the login policy',
    run: (core, w) => createDefaultLoginPolicy(core, w.id),
  },
]

/**
 * Runs the steps after the last one recorded, recording each, then marks the workspace active.
 * On the last attempt a failure becomes `provisioning_failed` with a readable reason; before it,
 * the error propagates so the job queue retries. A deleted or already-active workspace is left alone.
 */
export async function provisionWorkspace(
  core: Core,
  workspaceId: string,
  opts: { lastAttempt: boolean; steps?: ProvisionStep[] },
): Promise<void> {
  const steps = opts.steps ?? PROVISION_STEPS
  const [w] = await core.db.select().from(workspaces).where(eq(workspaces.id, workspaceId)).limit(1)
  if (w?.state !== 'provisioning') return
  const done = steps.findIndex((s) => s.name === w.provisioningStep)
  for (const step of steps.slice(done + 1)) {
    try {
      await step.run(core, w)
    } catch (e) {
      core.log.warn('provisioning step failed', { workspace_id: w.id, step: step.name, error: String(e) })
      if (!opts.lastAttempt) throw e
      await core.db
        .update(workspaces)
        .set({
          state: 'provisioning_failed',
          provisioningError: `Could not ${step.does}. Retry provisioning; if it keeps failing, contact support.`,
          updatedAt: core.clock.now(),
        })
        .where(eq(workspaces.id, w.id))
      return
    }
    await core.db.update(workspaces).set({ provisioningStep: step.name }).where(eq(workspaces.id, w.id))
  }
  await core.db
    .update(workspaces)
    .set({ state: 'active', provisioningError: null, provisioningStep: null, updatedAt: core.clock.now() })
    .where(eq(workspaces.id, w.id))
}

/**
 * Removes one owner's rows of a workspace being deleted (its apps, its identity instance, its
 * events…). Each feature that holds workspace data provides one; each is idempotent.
 */
export type TeardownStep = (core: Core, workspaceId: string) => Promise<void>

/**
 * Purges a `deleting` workspace: every owner's step, then the workspace row, last, so that a step
 * that fails leaves the workspace `deleting` and the job's retry runs the steps again. Idempotent.
 */
export async function teardownWorkspace(
  core: Core,
  workspaceId: string,
  steps: TeardownStep[],
): Promise<void> {
  const [w] = await core.db.select().from(workspaces).where(eq(workspaces.id, workspaceId)).limit(1)
  if (w?.state !== 'deleting') return
  for (const step of steps) await step(core, w.id)
  await core.db.delete(workspaces).where(eq(workspaces.id, w.id))
}
