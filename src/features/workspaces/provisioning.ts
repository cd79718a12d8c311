import { eq } from 'drizzle-orm'
import type { Core } from '../../core'
import type { ProvisionStep, TeardownStep } from '../feature'
import { workspaces } from './schema'

/**
 * Runs the steps after the last one recorded, recording each, then marks the workspace active.
 * On the last attempt a failure becomes `provisioning_failed` with a readable reason; before it,
 * the error propagates so the job queue retries. A deleted or already-active workspace is left alone.
 */
export async function provisionWorkspace(
  core: Core,
  workspaceId: string,
  opts: { lastAttempt: boolean; steps: ProvisionStep[] },
): Promise<void> {
  const { steps } = opts
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
