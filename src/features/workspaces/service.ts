import { and, count, desc, eq } from 'drizzle-orm'
import type { Core } from '../../core'
import { issuerFor } from '../../identity'
import { isoTime } from '../../shared/clock'
import { appError } from '../../shared/errors'
import { newWorkspaceId } from '../../shared/ids'
import { displayName } from '../../shared/names'
import { WorkspaceErrors } from './errors'
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

/** Every query is scoped by owner: another user's workspace is indistinguishable from none (404). */
export function createWorkspaceService(core: Core) {
  const owned = (ownerId: string, id: string) =>
    core.db
      .select()
      .from(workspaces)
      .where(and(eq(workspaces.id, id), eq(workspaces.ownerId, ownerId)))
      .get()

  const get = (ownerId: string, id: string): Workspace => {
    const w = owned(ownerId, id)
    if (!w) throw appError(WorkspaceErrors.NOT_FOUND, 404)
    return w
  }

  const setState = (id: string, set: Partial<Workspace>) =>
    core.db
      .update(workspaces)
      .set({ ...set, updatedAt: core.clock.now() })
      .where(eq(workspaces.id, id))
      .returning()
      .get()!

  return {
    owned,
    get,

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

    rename(ownerId: string, id: string, name: string): Workspace {
      get(ownerId, id)
      return setState(id, { name: displayName(name) })
    },

    /** Moves to `deleting`; a job tears the instance down and purges the data. Idempotent. */
    remove(ownerId: string, id: string): Workspace {
      const w = get(ownerId, id)
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
    retry(ownerId: string, id: string): Workspace {
      const w = get(ownerId, id)
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
