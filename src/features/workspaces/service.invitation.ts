import { eq } from 'drizzle-orm'
import type { UserPrincipal } from '../../access/model'
import type { Core } from '../../core'
import { PLATFORM_LOGIN_POLICY, type UserAccount } from '../../identity'
import { sha256Hex } from '../../shared/crypto'
import { appError } from '../../shared/errors'
import { MemberErrors } from './errors'
import { memberInvitations, workspaceMembers, workspaces } from './schema'
import type { Workspace } from './service'
import type { Caller, MemberInvitation } from './service.members'

/** What an invitation link opens: the invitation, its workspace, and whether it ran out. */
export interface OpenInvitation {
  invitation: MemberInvitation
  workspace: Pick<Workspace, 'id' | 'name'>
  expired: boolean
}

/** Whether the account is the one an invitation was sent to (both addresses are stored normalised). */
export const invitationIsFor = (i: MemberInvitation, account: Pick<UserAccount, 'email'>) =>
  account.email === i.email

/**
 * The other end of a member invitation (created by the member service's `add`): the link mailed to
 * the invited address, opened and accepted by the platform account of that address.
 */
export function createInvitationService(core: Core) {
  return {
    /** What an invitation link opens, without using it; undefined for a link used, cancelled or unknown. */
    async open(token: string): Promise<OpenInvitation | undefined> {
      if (!token) return undefined
      const [row] = await core.db
        .select({
          invitation: memberInvitations,
          id: workspaces.id,
          name: workspaces.name,
          state: workspaces.state,
        })
        .from(memberInvitations)
        .innerJoin(workspaces, eq(workspaces.id, memberInvitations.workspaceId))
        .where(eq(memberInvitations.tokenHash, sha256Hex(token)))
        .limit(1)
      if (!row || row.state === 'deleting') return undefined
      return {
        invitation: row.invitation,
        workspace: { id: row.id, name: row.name },
        expired: row.invitation.expiresAt <= core.clock.now(),
      }
    },

    /**
     * Accepts an invitation as the signed-in account (`member.joined`, the account its actor): only
     * the account of the invited address (verified, when the platform asks for that), only while the
     * link is live. The link is used up and the membership made in one transaction; an account
     * that became a member meanwhile keeps its role. Answers the workspace joined.
     */
    async accept(token: string, by: Caller & { principal: UserPrincipal }): Promise<string> {
      const account = by.principal.account
      const now = core.clock.now()
      return core.store.tx(async (tx) => {
        const [invitation] = await tx.db
          .delete(memberInvitations)
          .where(eq(memberInvitations.tokenHash, sha256Hex(token)))
          .returning()
        const [workspace] = invitation
          ? await tx.db.select().from(workspaces).where(eq(workspaces.id, invitation.workspaceId)).limit(1)
          : []
        if (!invitation || !workspace || workspace.state === 'deleting')
          throw appError(MemberErrors.INVITATION_INVALID, 404)
        // Each refusal below rolls the delete back: the link still works for the right account.
        if (invitation.expiresAt <= now) throw appError(MemberErrors.INVITATION_EXPIRED, 410)
        if (!invitationIsFor(invitation, account)) throw appError(MemberErrors.INVITATION_OTHER_ACCOUNT, 403)
        if (PLATFORM_LOGIN_POLICY.requireEmailVerification && !account.emailVerified)
          throw appError(MemberErrors.EMAIL_NOT_VERIFIED, 403)
        const [joined] = await tx.db
          .insert(workspaceMembers)
          .values({
            workspaceId: workspace.id,
            accountId: account.id,
            role: invitation.role,
            createdAt: now,
            updatedAt: now,
          })
          .onConflictDoNothing()
          .returning()
        if (joined) {
          await core.audit(
            {
              workspaceId: workspace.id,
              actor: by.actor,
              action: 'member.joined',
              target: { type: 'member', id: account.id },
              changes: { role: { to: invitation.role }, invitation: { from: invitation.id } },
            },
            { tx },
          )
        }
        return workspace.id
      })
    },
  }
}
