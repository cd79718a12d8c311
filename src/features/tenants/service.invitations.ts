import { and, eq, inArray } from 'drizzle-orm'
import type { Actor } from '../../access/model'
import type { TenantReach } from '../../access/scopes'
import type { Core } from '../../core'
import { deleteInBatches } from '../../db/batch-delete'
import type { Conn } from '../../db/store'
import { findAccountByEmail, INVITE_TTL_MS, normalizeEmail, type UserAccount } from '../../identity'
import { isoTime } from '../../shared/clock'
import { appError } from '../../shared/errors'
import { sendMail } from '../mail/service'
import { createUserService } from '../users/service'
import type { Workspace } from '../workspaces/service'
import { TenantErrors } from './errors'
import type { TenantModel } from './model'
import { tenantInvitations, tenantMembers } from './schema'
import { reachableTenant, type Tenant, tenantLock, userLock } from './service'

const until = (at: number) => `${isoTime(at).slice(0, 16).replace('T', ' ')} UTC`

/** What an account the workspace already has is sent: it joins by signing in. */
function joinMail(workspace: Workspace, tenant: Tenant, email: string, expiresAt: number) {
  return {
    to: email,
    subject: `You are invited to join ${tenant.name}`,
    text: [
      `You have been invited to join ${tenant.name} in ${workspace.name} as ${email}.`,
      '',
      `Sign in to ${workspace.name} with this address before ${until(expiresAt)} and you are a member of ${tenant.name}.`,
      '',
      'If you did not expect this invitation, ignore this email.',
    ].join('\n'),
    workspaceId: workspace.id,
  }
}

/**
 * Invitations to a tenant by email (DESIGN "Decisions of 2026-12-05"): how a tenant key, which sees
 * its tenant's members and no other user, brings someone in. Its answer is the same whoever the
 * address belongs to; the account with the address joins at its next sign-in, the address proved.
 */
export function createTenantInvitationService(core: Core) {
  const users = createUserService(core)

  return {
    /**
     * Invites `input.email` to the tenant (`tenant.member_invited`): an address the workspace has
     * is mailed to sign in; any other gets the workspace's invitation (`user.invited`), which says
     * which tenant it joins. 202 either way, with the address alone.
     */
    async invite(
      workspace: Workspace,
      actor: Actor,
      reach: TenantReach,
      tenantId: string,
      input: TenantModel.Invite,
    ): Promise<TenantModel.Invited> {
      if (workspace.state === 'deleting') throw appError(TenantErrors.WORKSPACE_DELETING, 409)
      // Before anything differs by address: the users' invitation would refuse a workspace not active.
      if (workspace.state !== 'active') throw appError(TenantErrors.WORKSPACE_NOT_ACTIVE, 409)
      const email = normalizeEmail(input.email)
      const expiresAt = core.clock.now() + INVITE_TTL_MS
      const answer = { email, status: 'invited' as const, expires_at: isoTime(expiresAt) }
      /**
       * In the caller's transaction: the tenant within `reach` (404 otherwise), 409 when the address is
       * a member's (whom the caller already sees), and the invitation kept (a repeated one is renewed).
       */
      async function keep(tx: Conn) {
        await tenantLock(tx, tenantId)
        const tenant = await reachableTenant(tx, workspace.id, reach, tenantId)
        const account = await findAccountByEmail(tx, workspace.id, email)
        if (account) {
          const [member] = await tx.db
            .select()
            .from(tenantMembers)
            .where(and(eq(tenantMembers.tenantId, tenant.id), eq(tenantMembers.userId, account.id)))
            .limit(1)
          if (member) throw appError(TenantErrors.MEMBER_EXISTS, 409, { loc: ['body', 'email'] })
        }
        const now = core.clock.now()
        await tx.db
          .insert(tenantInvitations)
          .values({
            tenantId: tenant.id,
            email,
            workspaceId: workspace.id,
            invitedBy: actor.id,
            createdAt: now,
            expiresAt,
          })
          .onConflictDoUpdate({
            target: [tenantInvitations.tenantId, tenantInvitations.email],
            set: { invitedBy: actor.id, createdAt: now, expiresAt },
          })
        await core.audit(
          {
            workspaceId: workspace.id,
            actor,
            action: 'tenant.member_invited',
            target: { type: 'tenant', id: tenant.id },
            changes: { email: { to: email } },
          },
          { tx },
        )
        return { tenant, account }
      }
      if (!(await findAccountByEmail(core, workspace.id, email))) {
        const made = await users.inviteNew(workspace, actor, { ...input, email }, async (tx) => {
          const { tenant } = await keep(tx)
          return `Once you have chosen your password and signed in, you are a member of ${tenant.name}.`
        })
        if (made) return answer
      }
      // The address has an account (perhaps since a moment ago).
      await core.store.tx(async (tx) => {
        const { tenant, account } = await keep(tx)
        if (account) await sendMail(core, joinMail(workspace, tenant, account.email, expiresAt), { tx })
      })
      return answer
    },
  }
}

/**
 * At each sign-in to a workspace's instance (the identity plane's `accountSignedIn`): the tenants the
 * account's address is invited to, joined (`tenant.member_added`, by whoever invited). Only with
 * the address proved: an account that merely claims an address joins nothing.
 */
export const joinInvitedTenants =
  (core: Core) =>
  async (workspaceId: string, account: Pick<UserAccount, 'id' | 'email' | 'emailVerified'>) => {
    if (!account.emailVerified) return
    const of = and(eq(tenantInvitations.workspaceId, workspaceId), eq(tenantInvitations.email, account.email))
    // A read on every sign-in; a transaction only when there is something to join.
    const pending = await core.db
      .select({ tenantId: tenantInvitations.tenantId })
      .from(tenantInvitations)
      .where(of)
    if (!pending.length) return
    const tenantIds = pending.map((p) => p.tenantId).sort()
    await core.store.tx(async (tx) => {
      // In the order adding a member takes them: each tenant, then the user.
      for (const id of tenantIds) await tenantLock(tx, id)
      await userLock(tx, workspaceId, account.id)
      // A tenant deleted meanwhile took its invitations with it.
      const used = await tx.db
        .delete(tenantInvitations)
        .where(and(of, inArray(tenantInvitations.tenantId, tenantIds)))
        .returning()
      const now = core.clock.now()
      for (const invitation of used.filter((i) => i.expiresAt > now)) {
        const [added] = await tx.db
          .insert(tenantMembers)
          .values({ tenantId: invitation.tenantId, userId: account.id, workspaceId, createdAt: now })
          .onConflictDoNothing()
          .returning()
        if (!added) continue
        await core.audit(
          {
            workspaceId,
            actor: { id: invitation.invitedBy, ip: null, userAgent: null },
            action: 'tenant.member_added',
            target: { type: 'tenant', id: invitation.tenantId },
            changes: { user_id: { to: account.id }, email: { to: account.email } },
          },
          { tx },
        )
      }
    })
  }

/** Invitations nobody used in time (the periodic purge). */
export async function purgeExpiredTenantInvitations(core: Core): Promise<Record<string, number>> {
  return {
    tenant_invitations: await deleteInBatches(core.store, 'tenant_invitations', 'expires_at <= $1', [
      core.clock.now(),
    ]),
  }
}
