import { and, count, desc, eq, getTableColumns, ne } from 'drizzle-orm'
import type { Core } from '../../core'
import { issuerFor } from '../../identity'
import { isoTime } from '../../shared/clock'
import { newWorkspaceId } from '../../shared/ids'
import { displayName } from '../../shared/names'
import { PROVISION_JOB, TEARDOWN_JOB } from './jobs'
import { workspaceMembers, workspaces } from './schema'

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
  const setState = async (id: string, set: Partial<Workspace>): Promise<Workspace> => {
    const [row] = await core.db
      .update(workspaces)
      .set({ ...set, updatedAt: core.clock.now() })
      .where(eq(workspaces.id, id))
      .returning()
    return row!
  }

  return {
    /** The workspaces the account is a member of, newest first. */
    list(accountId: string): Promise<Workspace[]> {
      return core.db
        .select(getTableColumns(workspaces))
        .from(workspaces)
        .innerJoin(workspaceMembers, eq(workspaceMembers.workspaceId, workspaces.id))
        .where(eq(workspaceMembers.accountId, accountId))
        .orderBy(desc(workspaces.createdAt), desc(workspaces.id))
    },

    async count(accountId: string): Promise<number> {
      const [row] = await core.db
        .select({ n: count() })
        .from(workspaceMembers)
        .where(eq(workspaceMembers.accountId, accountId))
      return Number(row?.n ?? 0)
    },

    /**
     * Creates the row in `provisioning`, its creator as its first owner, and the provisioning job,
     * in one transaction.
     */
    create(ownerId: string, name: string): Promise<Workspace> {
      const now = core.clock.now()
      return core.store.tx(async (tx) => {
        const [w] = await tx.db
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
        await tx.db
          .insert(workspaceMembers)
          .values({ workspaceId: w!.id, accountId: ownerId, role: 'owner', createdAt: now, updatedAt: now })
        await core.jobs.enqueue(
          PROVISION_JOB,
          { workspaceId: w!.id },
          { workspaceId: w!.id, maxAttempts: 3, tx },
        )
        return w!
      })
    },

    rename(w: Workspace, name: string): Promise<Workspace> {
      return setState(w.id, { name: displayName(name) })
    },

    /** Moves to `deleting`; a job tears the instance down and purges the data. Idempotent. */
    async remove(w: Workspace): Promise<Workspace> {
      const id = w.id
      if (w.state === 'deleting') return w
      const updated = await core.store.tx(async (tx) => {
        // Only the request that moves it to `deleting` enqueues the teardown: two deletes at once
        // (on two nodes) start one.
        const [row] = await tx.db
          .update(workspaces)
          .set({ state: 'deleting', updatedAt: core.clock.now() })
          .where(and(eq(workspaces.id, id), ne(workspaces.state, 'deleting')))
          .returning()
        // No `workspaceId` on the job: its row would outlive the workspace it deletes.
        if (row) await core.jobs.enqueue(TEARDOWN_JOB, { workspaceId: id }, { tx })
        return row ?? { ...w, state: 'deleting' as const }
      })
      // The instance stops serving with this request, not when the teardown job runs.
      await core.instances.changed(id)
      return updated
    },

    /** Re-runs provisioning from `provisioning_failed`; in any other state a no-op (SPEC). */
    async retry(w: Workspace): Promise<Workspace> {
      const id = w.id
      if (w.state !== 'provisioning_failed') return w
      return core.store.tx(async (tx) => {
        const [updated] = await tx.db
          .update(workspaces)
          .set({ state: 'provisioning', provisioningError: null, updatedAt: core.clock.now() })
          .where(and(eq(workspaces.id, id), eq(workspaces.state, 'provisioning_failed')))
          .returning()
        // Two retries at once (on two nodes): the one that moved the state enqueues.
        if (!updated) return w
        await core.jobs.enqueue(PROVISION_JOB, { workspaceId: id }, { workspaceId: id, maxAttempts: 3, tx })
        return updated
      })
    },
  }
}

export type WorkspaceService = ReturnType<typeof createWorkspaceService>
