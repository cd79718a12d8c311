import { eq } from 'drizzle-orm'
import type { Core } from '../../core'
import { apps, events, workspaces } from '../../db/schema'
import { deleteInstanceData, ensureInstanceKeys } from '../../identity'
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
  const w = core.db.select().from(workspaces).where(eq(workspaces.id, workspaceId)).get()
  if (w?.state !== 'provisioning') return
  const done = steps.findIndex((s) => s.name === w.provisioningStep)
  for (const step of steps.slice(done + 1)) {
    try {
      await step.run(core, w)
    } catch (e) {
      core.log.warn('provisioning step failed', { workspace_id: w.id, step: step.name, error: String(e) })
      if (!opts.lastAttempt) throw e
      core.db
        .update(workspaces)
        .set({
          state: 'provisioning_failed',
          provisioningError: `Could not ${step.does}. Retry provisioning; if it keeps failing, contact support.`,
          updatedAt: core.clock.now(),
        })
        .where(eq(workspaces.id, w.id))
        .run()
      return
    }
    core.db.update(workspaces).set({ provisioningStep: step.name }).where(eq(workspaces.id, w.id)).run()
  }
  core.db
    .update(workspaces)
    .set({ state: 'active', provisioningError: null, provisioningStep: null, updatedAt: core.clock.now() })
    .where(eq(workspaces.id, w.id))
    .run()
}

/**
 * Tears down a `deleting` workspace's identity instance and purges its data. Idempotent: the
 * instance's data goes first, so a failure before the workspace row is gone runs it all again.
 */
export function teardownWorkspace(core: Core, workspaceId: string): void {
  const w = core.db.select().from(workspaces).where(eq(workspaces.id, workspaceId)).get()
  if (w?.state !== 'deleting') return
  deleteInstanceData(core, w.id)
  core.db.transaction((tx) => {
    tx.delete(apps).where(eq(apps.instanceId, w.id)).run()
    tx.delete(events).where(eq(events.workspaceId, w.id)).run()
    tx.delete(workspaces).where(eq(workspaces.id, w.id)).run()
  })
}
