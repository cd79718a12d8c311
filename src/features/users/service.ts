import type { Actor, Principal } from '../../access/model'
import { type FieldChanges, fieldChanges } from '../../audit/record'
import type { Core } from '../../core'
import type { Conn } from '../../db/store'
import {
  accountMfaSummary,
  deleteAccount,
  findAccount,
  type Invitation,
  inviteAccount,
  listAccounts,
  type MfaSummary,
  reissueAccountLink,
  resetAccountMfa,
  type UserAccount,
} from '../../identity'
import { isoTime } from '../../shared/clock'
import { appError, notFound } from '../../shared/errors'
import { decodeCursor, encodeCursor, pageLimit } from '../../shared/pagination'
import { mayCopyMailedLinks, sendMail } from '../mail/service'
import { removeUserFromTenants } from '../tenants/service'
import type { Workspace } from '../workspaces/service'
import { UsersErrors } from './errors'
import type { UserModel } from './model'

const userOut = (a: UserAccount): UserModel.Out => ({
  id: a.id,
  email: a.email,
  name: a.name,
  email_verified: Boolean(a.emailVerified),
  status: a.status,
  via_idp: a.viaIdp ?? null,
  created_at: isoTime(a.createdAt),
  last_sign_in_at: a.lastSignInAt == null ? null : isoTime(a.lastSignInAt),
})

/**
 * What the audit log shows of a user coming or going: who they are, never a password, a token or
 * an invitation link.
 */
const who = (a: { email: string; name: string }) => ({ email: a.email, name: a.name })
const WHO = ['email', 'name'] as const

const invitedOut = (i: Invitation) => ({
  id: i.account.id,
  email: i.account.email,
  status: 'invited' as const,
  invited_at: isoTime(i.account.invitedAt ?? i.account.createdAt),
  expires_at: isoTime(i.expiresAt),
})

/** `note`: a paragraph another feature adds (the tenant the user joins once signed in). */
function invitationMail(workspace: Workspace, i: Invitation, note: string | undefined) {
  const expires = isoTime(i.expiresAt).slice(0, 16).replace('T', ' ')
  return {
    to: i.account.email,
    subject: `You are invited to ${workspace.name}`,
    text: [
      `You have been invited to create an account for ${i.account.email} in ${workspace.name}.`,
      '',
      ...(note ? [note, ''] : []),
      'Choose your password by opening this link:',
      '',
      i.link,
      '',
      `The link works once, until ${expires} UTC. If you did not expect this invitation, ignore this email.`,
    ].join('\n'),
    workspaceId: workspace.id,
  }
}

/**
 * The users of a workspace's identity instance: they are the instance's accounts, reached only
 * through the identity plane's index (listing, invitation, deletion, MFA reset).
 */
export function createUserService(core: Core) {
  /** A user's audit entry, in the change's transaction. */
  const record = (
    tx: Conn,
    workspace: Workspace,
    actor: Actor,
    action: string,
    account: { id: string },
    changes: FieldChanges,
  ) =>
    core.audit(
      { workspaceId: workspace.id, actor, action, target: { type: 'user', id: account.id }, changes },
      { tx },
    )

  /**
   * `invite` for another feature (a tenant inviting by email): null for a known address. `also`
   * runs first in the invitation's transaction, its answer a paragraph the mail adds.
   */
  async function inviteNew(
    workspace: Workspace,
    actor: Actor,
    input: UserModel.Invite,
    also?: (tx: Conn) => Promise<string>,
  ): Promise<Invitation | null> {
    if (workspace.state === 'deleting') throw appError(UsersErrors.WORKSPACE_DELETING, 409)
    if (workspace.state !== 'active') throw appError(UsersErrors.WORKSPACE_NOT_ACTIVE, 409)
    return inviteAccount(core, workspace.id, input, async (tx, i) => {
      const note = await also?.(tx)
      await sendMail(core, invitationMail(workspace, i, note), { tx })
      await record(tx, workspace, actor, 'user.invited', i.account, fieldChanges(null, who(i.account), WHO))
    })
  }

  return {
    async list(workspace: Workspace, query: { limit?: number; cursor?: string; q?: string }) {
      const limit = pageLimit(query.limit)
      const after = query.cursor ? decodeCursor(query.cursor) : null
      const page = await listAccounts(core, workspace.id, { limit, after, q: query.q })
      const last = page.items.at(-1)
      return {
        items: page.items.map(userOut),
        total: page.total,
        next_cursor: page.more && last ? encodeCursor(last.id) : null,
      }
    },

    /** Which second factors each listed user has (the dashboard's badges; the API shows none). */
    mfaOf(workspace: Workspace, userIds: string[]): Promise<Map<string, MfaSummary>> {
      return accountMfaSummary(core, workspace.id, userIds)
    },

    /**
     * Invites a user (`user.invited`): an `invited` account and a mail with a single-use link valid
     * 7 days, sent through the workspace's mail path and queued in the same transaction. 409 for a
     * known address. The audit entry names the address, never the link.
     */
    async invite(workspace: Workspace, actor: Actor, input: UserModel.Invite) {
      const invitation = await inviteNew(workspace, actor, input)
      if (!invitation) throw appError(UsersErrors.EMAIL_TAKEN, 409, { loc: ['body', 'email'] })
      return { invited: invitedOut(invitation), user: userOut(invitation.account) }
    },

    inviteNew,

    /**
     * Idempotent (SPEC): a user already gone is not an error, and records nothing; deleting one
     * records `user.deleted`. Ends their sessions and tokens at once, and their tenant memberships go
     * in the same transaction.
     */
    async remove(workspace: Workspace, actor: Actor, userId: string): Promise<void> {
      await deleteAccount(core, workspace.id, userId, async (tx, account) => {
        await removeUserFromTenants(tx, workspace.id, userId)
        await record(tx, workspace, actor, 'user.deleted', account, fieldChanges(who(account), null, WHO))
      })
    },

    /**
     * A fresh link of a user whose mail went nowhere, for the platform administrator to hand over
     * (404 for anyone else, as if there were none): their invitation while `invited`, else their
     * email verification while unverified. Audited as `user.invitation_link_issued` or
     * `user.verification_link_issued`, never with the link; any earlier link of it stops working.
     */
    async issueLink(workspace: Workspace, by: { principal: Principal; actor: Actor }, userId: string) {
      if (!(await mayCopyMailedLinks(core, by.principal, workspace.id))) throw notFound('User')
      const issued = await reissueAccountLink(core, workspace.id, userId, (tx, account, purpose) =>
        record(
          tx,
          workspace,
          by.actor,
          purpose === 'invite' ? 'user.invitation_link_issued' : 'user.verification_link_issued',
          account,
          {},
        ),
      )
      if (!issued) throw appError(UsersErrors.USER_NOT_FOUND, 404)
      return { email: issued.account.email, link: issued.link, expiresAt: isoTime(issued.expiresAt) }
    },

    /**
     * Removes the user's second factors (`user.mfa_reset`); they enrol again at their next sign-in.
     * 404 for an unknown user.
     */
    async resetMfa(workspace: Workspace, actor: Actor, userId: string): Promise<void> {
      const account = await findAccount(core, workspace.id, userId)
      if (!account) throw appError(UsersErrors.USER_NOT_FOUND, 404)
      await resetAccountMfa(core, workspace.id, userId, (tx) =>
        record(tx, workspace, actor, 'user.mfa_reset', account, {}),
      )
    },
  }
}
