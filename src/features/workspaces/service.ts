import { and, count, desc, eq } from 'drizzle-orm'
import type { Core } from '../../core'
import { issuerFor } from '../../identity'
import { isoTime } from '../../shared/clock'
import { newWorkspaceId } from '../../shared/ids'
import { displayName } from '../../shared/names'
import { PROVISION_JOB, TEARDOWN_JOB } from './jobs'
import { workspaces } from './schema'

export type Workspace = typeof workspaces.$inferSelect

/** WorkspaceOut (DESIGN.md). */
export const workspaceOut = (core: Core, w: Workspace) => ({
  id: w.id,
  name: w.name,
  state: w.state,
  plan: w.plan,
  auth_url: issuerFor(core.config, w.id),
  created_at: isoTime(w.createdAt),
  updated_at: isoTime(w.updatedAt),
  provisioning_error: w.provisioningError,
})

/**
 * Workspaces. Who may act on one is decided once, by the auth guard's scope rule
 * (`scopes.ts`): the operations here take the workspace row it resolved.
 */
export function createWorkspaceService(core: Core) {
  const setState = (id: string, set: Partial<Workspace>) =>
    core.db
      .update(workspaces)
      .set({ ...set, updatedAt: core.clock.now() })
      .where(eq(workspaces.id, id))
      .returning()
      .get()!

  return {
    list(ownerId: string): Workspace[] {
      return core.db
        .select()
        .from(workspaces)
        .where(eq(workspaces.ownerId, ownerId))
        .orderBy(desc(workspaces.createdAt), desc(workspaces.id))
        .all()
    },

    count(ownerId: string): number {
      return (
        core.db.select({ n: count() }).from(workspaces).where(eq(workspaces.ownerId, ownerId)).get()?.n ?? 0
      )
    },

    /** Creates the row in `provisioning` and the provisioning job in one transaction. */
    create(ownerId: string, name: string): Workspace {
      const now = core.clock.now()
      return core.db.transaction((tx) => {
        const w = tx
          .insert(workspaces)
          .values({
            id: newWorkspaceId(),
            name: displayName(name),
            ownerId,
            state: 'provisioning',
            createdAt: now,
            updatedAt: now,
          })
          .returning()
          .get()
        core.jobs.enqueue(PROVISION_JOB, { workspaceId: w.id }, { workspaceId: w.id, maxAttempts: 3, tx })
        return w
      })
    },

    rename(w: Workspace, name: string): Workspace {
      return setState(w.id, { name: displayName(name) })
    },

    /** Moves to `deleting`; a job tears the instance down and purges the data. Idempotent. */
    remove(w: Workspace): Workspace {
      const id = w.id
      if (w.state === 'deleting') return w
      const updated = core.db.transaction((tx) => {
        const row = tx
          .update(workspaces)
          .set({ state: 'deleting', updatedAt: core.clock.now() })
          .where(eq(workspaces.id, id))
          .returning()
          .get()!
        core.jobs.enqueue(TEARDOWN_JOB, { workspaceId: id }, { workspaceId: id, tx })
        return row
      })
      // The instance stops serving with this request, not when the teardown job runs.
      core.instances.changed(id)
      return updated
    },

    /** Re-runs provisioning from `provisioning_failed`; in any other state a no-op (SPEC). */
    retry(w: Workspace): Workspace {
      const id = w.id
      if (w.state !== 'provisioning_failed') return w
      return core.db.transaction((tx) => {
        const updated = tx
          .update(workspaces)
          .set({ state: 'provisioning', provisioningError: null, updatedAt: core.clock.now() })
          .where(and(eq(workspaces.id, id), eq(workspaces.state, 'provisioning_failed')))
          .returning()
          .get()!
        core.jobs.enqueue(PROVISION_JOB, { workspaceId: id }, { workspaceId: id, maxAttempts: 3, tx })
        return updated
      })
    },
  }
}

export type WorkspaceService = ReturnType<typeof createWorkspaceService>
