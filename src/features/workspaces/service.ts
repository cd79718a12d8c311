import { and, count, desc, eq, getTableColumns, ne } from 'drizzle-orm'
import type { Actor } from '../../access/model'
import { holdsScope } from '../../access/scopes'
import { type FieldChanges, fieldChanges } from '../../audit/record'
import type { Core } from '../../core'
import type { Conn } from '../../db/store'
import { findAccounts, issuerFor, PLATFORM } from '../../identity'
import { isoTime } from '../../shared/clock'
import { displayName } from '../../shared/display-names'
import { appError, forbidden, notFound } from '../../shared/errors'
import { newWorkspaceId } from '../../shared/ids'
import { WorkspaceErrors } from './errors'
import { PROVISION_JOB, TEARDOWN_JOB } from './jobs'
import type { WorkspaceModel } from './model'
import { type Plan, workspaceMembers, workspaces } from './schema'
import type { Caller } from './service.members'

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
  data_plane_rps: w.dataPlaneRps,
})

/**
 * Workspaces. Who may act on one is decided once, by the auth guard's scope rule
 * (`scopes.ts`): the operations here take the workspace row it resolved.
 */
export function createWorkspaceService(core: Core) {
  /** The workspace's own audit entry (`workspace.*`), in the change's transaction. */
  const record = (tx: Conn, w: Workspace, actor: Actor, action: string, changes?: FieldChanges) =>
    core.audit({ workspaceId: w.id, actor, action, target: { type: 'workspace', id: w.id }, changes }, { tx })

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
     * in one transaction (`workspace.created`).
     */
    create(ownerId: string, actor: Actor, name: string): Promise<Workspace> {
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
        await record(tx, w!, actor, 'workspace.created', fieldChanges(null, w!, ['name']))
        return w!
      })
    },

    /**
     * Changes what the update names: the name (`workspace.renamed` when only it changed) and the
     * identity plane's rate (`workspace.updated`; Pro and above, 422 on Free). What did not change
     * records nothing. Every node's identity plane follows at once.
     */
    async update(
      w: Workspace,
      by: { actor: Actor; scopes: readonly string[] },
      input: WorkspaceModel.Update,
    ): Promise<Workspace> {
      const { actor } = by
      // The rate is a plan setting (SPEC: plan changes need workspace:admin), not a developer's.
      if (input.data_plane_rps !== undefined && !holdsScope(by.scopes, 'workspace:admin'))
        throw forbidden('Changing data_plane_rps needs the workspace:admin scope')
      if (input.data_plane_rps != null && w.plan === 'free')
        throw appError(WorkspaceErrors.RATE_NEEDS_PLAN, 422, { loc: ['body', 'data_plane_rps'] })
      const set: Partial<Workspace> = {}
      if (input.name !== undefined) set.name = displayName(input.name)
      if (input.data_plane_rps !== undefined) set.dataPlaneRps = input.data_plane_rps
      const { after, rateChanged } = await core.store.tx(async (tx) => {
        // Read under the lock: two updates at once each record the values they really replaced.
        await tx.serialize(`workspace:${w.id}`)
        const [before] = await tx.db.select().from(workspaces).where(eq(workspaces.id, w.id)).limit(1)
        const [after] = await tx.db
          .update(workspaces)
          .set({ ...set, updatedAt: core.clock.now() })
          .where(eq(workspaces.id, w.id))
          .returning()
        if (!before || !after) throw notFound('Workspace')
        const fields = (x: Workspace) => ({ name: x.name, data_plane_rps: x.dataPlaneRps })
        const changes = fieldChanges(fields(before), fields(after), ['name', 'data_plane_rps'])
        const changed = Object.keys(changes)
        if (changed.length === 1 && changed[0] === 'name')
          await record(tx, w, actor, 'workspace.renamed', changes)
        else if (changed.length > 0) await record(tx, w, actor, 'workspace.updated', changes)
        return { after, rateChanged: 'data_plane_rps' in changes }
      })
      // Every node's identity plane reads the new rate with its next request.
      if (rateChanged) await core.instances.changed(w.id)
      return after
    },

    /**
     * Moves to `deleting` (`workspace.deleted`); a job tears the instance down and purges the data,
     * this audit log included. Idempotent. `confirm`, when given, must be the workspace's exact name
     * (422). A person may leave it out (SPEC: the DELETE takes no body; the dashboard asks for the
     * typed name); a machine key may not (SPEC: workspace:admin deletes "with confirmation"), so an
     * automation's stray call or wrong id deletes nothing.
     */
    async remove(w: Workspace, by: Caller, confirm: string | undefined): Promise<Workspace> {
      const id = w.id
      if (confirm === undefined && by.principal.kind === 'key')
        throw appError(WorkspaceErrors.CONFIRM_REQUIRED, 422, { loc: ['body', 'confirm'] })
      if (confirm !== undefined && confirm !== w.name)
        throw appError(WorkspaceErrors.CONFIRM_MISMATCH, 422, { loc: ['body', 'confirm'] })
      const { actor } = by
      if (w.state === 'deleting') return w
      const updated = await core.store.tx(async (tx) => {
        // Only the request that moves it to `deleting` enqueues the teardown: two deletes at once
        // (on two nodes) start one.
        const [row] = await tx.db
          .update(workspaces)
          .set({ state: 'deleting', updatedAt: core.clock.now() })
          .where(and(eq(workspaces.id, id), ne(workspaces.state, 'deleting')))
          .returning()
        if (!row) return { ...w, state: 'deleting' as const }
        // No `workspaceId` on the job: its row would outlive the workspace it deletes.
        await core.jobs.enqueue(TEARDOWN_JOB, { workspaceId: id }, { tx })
        await record(tx, w, actor, 'workspace.deleted', fieldChanges(w, null, ['name']))
        return row
      })
      // The instance stops serving with this request, not when the teardown job runs.
      await core.instances.changed(id)
      return updated
    },

    /**
     * Re-runs provisioning from `provisioning_failed` (`workspace.provisioning_retried`, with the
     * error it had); in any other state a no-op (SPEC) that records nothing.
     */
    async retry(w: Workspace, actor: Actor): Promise<Workspace> {
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
        const changes = fieldChanges(workspaceOut(core, w), workspaceOut(core, updated), [
          'state',
          'provisioning_error',
        ])
        await record(tx, w, actor, 'workspace.provisioning_retried', changes)
        return updated
      })
    },
  }
}

/** The addresses of a workspace's owners, for mail about the workspace (a failing webhook endpoint). */
export async function ownerEmails(core: Core, workspaceId: string): Promise<string[]> {
  const owners = await core.db
    .select({ accountId: workspaceMembers.accountId })
    .from(workspaceMembers)
    .where(and(eq(workspaceMembers.workspaceId, workspaceId), eq(workspaceMembers.role, 'owner')))
  const found = await findAccounts(
    core,
    PLATFORM,
    owners.map((o) => o.accountId),
  )
  return found.map((a) => a.email)
}

export type { Plan } from './schema'

/** A workspace's plan, or null when it is gone (the billing feature's metering reads it). */
export async function workspacePlan(conn: Pick<Conn, 'db'>, workspaceId: string): Promise<Plan | null> {
  const [row] = await conn.db
    .select({ plan: workspaces.plan })
    .from(workspaces)
    .where(eq(workspaces.id, workspaceId))
    .limit(1)
  return row?.plan ?? null
}

/**
 * Sets a workspace's plan in `tx`, the billing feature's transaction that applies a payment event;
 * the plan it had, or null when the workspace is gone. The caller tells the instances after commit.
 */
export async function setWorkspacePlan(tx: Conn, workspaceId: string, plan: Plan, now: number) {
  await tx.serialize(`workspace:${workspaceId}`)
  const before = await workspacePlan(tx, workspaceId)
  if (before !== null && before !== plan)
    await tx.db.update(workspaces).set({ plan, updatedAt: now }).where(eq(workspaces.id, workspaceId))
  return before
}
