import { and, asc, count, eq, gt } from 'drizzle-orm'
import type { Actor } from '../../access/model'
import type { TenantReach } from '../../access/scopes'
import type { Core } from '../../core'
import type { Conn } from '../../db/store'
import {
  findAccount,
  findAccountByEmail,
  findAccounts,
  normalizeEmail,
  type UserAccount,
} from '../../identity'
import { isoTime } from '../../shared/clock'
import { appError } from '../../shared/errors'
import { decodeCursor, nextCursor, pageLimit } from '../../shared/pagination'
import type { Workspace } from '../workspaces/service'
import { TenantErrors } from './errors'
import type { TenantModel } from './model'
import { tenantMembers } from './schema'
import { reachableTenant, tenantLock, userLock } from './service'

type Membership = typeof tenantMembers.$inferSelect

const memberOut = (
  m: Membership,
  account: Pick<UserAccount, 'email' | 'name'> | undefined,
): TenantModel.Member => ({
  user_id: m.userId,
  email: account?.email ?? '',
  name: account?.name ?? '',
  added_at: isoTime(m.createdAt),
})

const membership = (tenantId: string, userId: string) =>
  and(eq(tenantMembers.tenantId, tenantId), eq(tenantMembers.userId, userId))

/**
 * A tenant's members: users of the workspace's identity instance (found through the identity
 * plane's index, never its tables). Reading takes a tenant's read, changing its write (the guard's
 * `reach`: a tenant outside it is 404). Changes are audited, not emitted (SPEC "Events" has no
 * membership event).
 */
export function createTenantMemberService(core: Core) {
  const audit = (
    tx: Conn,
    workspace: Workspace,
    actor: Actor,
    action: string,
    tenantId: string,
    user: string,
  ) =>
    core.audit(
      {
        workspaceId: workspace.id,
        actor,
        action,
        target: { type: 'tenant', id: tenantId },
        changes: { user_id: action === 'tenant.member_added' ? { to: user } : { from: user } },
      },
      { tx },
    )

  return {
    /** A page of the tenant's members, ordered by user id (creation order of the users). */
    async list(
      workspace: Workspace,
      reach: TenantReach,
      tenantId: string,
      query: { limit?: number; cursor?: string },
    ) {
      const tenant = await reachableTenant(core, workspace.id, reach, tenantId)
      const limit = pageLimit(query.limit)
      const of = eq(tenantMembers.tenantId, tenant.id)
      const [counted] = await core.db.select({ n: count() }).from(tenantMembers).where(of)
      const after = query.cursor ? gt(tenantMembers.userId, decodeCursor(query.cursor)) : undefined
      const rows = await core.db
        .select()
        .from(tenantMembers)
        .where(and(of, after))
        .orderBy(asc(tenantMembers.userId))
        .limit(limit + 1)
      const page = rows.slice(0, limit)
      const accounts = new Map(
        (
          await findAccounts(
            core,
            workspace.id,
            page.map((m) => m.userId),
          )
        ).map((a) => [a.id, a]),
      )
      return {
        items: page.map((m) => memberOut(m, accounts.get(m.userId))),
        total: Number(counted?.n ?? 0),
        next_cursor: nextCursor(rows, limit, (m) => m.userId),
      }
    },

    /** One member; 404 when the user is not one. */
    async get(workspace: Workspace, reach: TenantReach, tenantId: string, userId: string) {
      const tenant = await reachableTenant(core, workspace.id, reach, tenantId)
      const [row] = await core.db.select().from(tenantMembers).where(membership(tenant.id, userId)).limit(1)
      if (!row) throw appError(TenantErrors.MEMBER_NOT_FOUND, 404)
      const [account] = await findAccounts(core, workspace.id, [userId])
      return memberOut(row, account)
    },

    /**
     * Adds a user of the workspace (`tenant.member_added`): 404 for a user the workspace's instance
     * does not have, 409 for one already a member (as for workspace members; adding is not
     * silently repeated, so a script learns its view was stale). A caller reaching some tenants only
     * (a tenant key) sees its tenants' members and no other user (DESIGN "Decisions of
     * 2026-12-05"): it gets 409 for a member and the same 403 for anyone else, whether the
     * workspace has that user or not.
     */
    async add(
      workspace: Workspace,
      actor: Actor,
      reach: TenantReach,
      tenantId: string,
      userId: string,
    ): Promise<TenantModel.Member> {
      if (workspace.state === 'deleting') throw appError(TenantErrors.WORKSPACE_DELETING, 409)
      return core.store.tx(async (tx) => {
        await tenantLock(tx, tenantId)
        const tenant = await reachableTenant(tx, workspace.id, reach, tenantId)
        if (reach !== 'all') {
          const [member] = await tx.db
            .select()
            .from(tenantMembers)
            .where(membership(tenant.id, userId))
            .limit(1)
          if (member) throw appError(TenantErrors.MEMBER_EXISTS, 409, { loc: ['body', 'user_id'] })
          throw appError(TenantErrors.NOT_A_MEMBER_BY_ID, 403)
        }
        await userLock(tx, workspace.id, userId)
        const account = await findAccount(tx, workspace.id, userId)
        if (!account) throw appError(TenantErrors.USER_NOT_FOUND, 404)
        const [added] = await tx.db
          .insert(tenantMembers)
          .values({ tenantId: tenant.id, userId, workspaceId: workspace.id, createdAt: core.clock.now() })
          .onConflictDoNothing()
          .returning()
        if (!added) throw appError(TenantErrors.MEMBER_EXISTS, 409, { loc: ['body', 'user_id'] })
        await audit(tx, workspace, actor, 'tenant.member_added', tenant.id, userId)
        return memberOut(added, account)
      })
    },

    /** Removes a member (`tenant.member_removed`); idempotent for a user who is not one. */
    async remove(workspace: Workspace, actor: Actor, reach: TenantReach, tenantId: string, userId: string) {
      await core.store.tx(async (tx) => {
        const tenant = await reachableTenant(tx, workspace.id, reach, tenantId)
        const [gone] = await tx.db.delete(tenantMembers).where(membership(tenant.id, userId)).returning()
        if (gone) await audit(tx, workspace, actor, 'tenant.member_removed', tenant.id, userId)
      })
    },

    /** The id of the workspace's user a person named by email or by id (the dashboard's form). */
    async userIdOf(workspace: Workspace, emailOrId: string): Promise<string> {
      const text = emailOrId.trim()
      // Nothing a user could be named by holds a control character (nor may reach the store).
      if (/\p{Cc}/u.test(text)) throw appError(TenantErrors.USER_EMAIL_NOT_FOUND, 404)
      if (!text.includes('@')) return text
      const account = await findAccountByEmail(core, workspace.id, normalizeEmail(text))
      if (!account) throw appError(TenantErrors.USER_EMAIL_NOT_FOUND, 404)
      return account.id
    },
  }
}
