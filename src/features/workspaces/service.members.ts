import { and, asc, eq, ne } from 'drizzle-orm'
import type { Actor, Principal } from '../../access/model'
import type { FieldChanges } from '../../audit/record'
import type { Core } from '../../core'
import type { Conn } from '../../db/store'
import {
  findAccountByEmail,
  findAccounts,
  INVITE_TTL_MS,
  normalizeEmail,
  PLATFORM,
  type UserAccount,
} from '../../identity'
import { isoTime } from '../../shared/clock'
import { randomToken, sha256Hex } from '../../shared/crypto'
import { appError, notFound } from '../../shared/errors'
import { newId } from '../../shared/ids'
import { mayCopyMailedLinks, sendMail } from '../mail/service'
import { MemberErrors } from './errors'
import type { MemberModel } from './model'
import { type MemberRole, memberInvitations, workspaceMembers, workspaces } from './schema'
import type { Workspace } from './service'

export type Member = typeof workspaceMembers.$inferSelect
export type MemberInvitation = typeof memberInvitations.$inferSelect

/** Who asks, as the guard hands it to a route: the owner rules read the principal, the audit log the actor. */
export interface Caller {
  principal: Principal
  actor: Actor
}

const memberOut = (m: Member, account: UserAccount | undefined): MemberModel.Out => ({
  account_id: m.accountId,
  invitation_id: null,
  email: account?.email ?? '',
  name: account?.name ?? '',
  role: m.role,
  status: 'active',
  created_at: isoTime(m.createdAt),
  expires_at: null,
})

const invitationOut = (i: MemberInvitation): MemberModel.Out => ({
  account_id: null,
  invitation_id: i.id,
  email: i.email,
  name: '',
  role: i.role,
  status: 'invited',
  created_at: isoTime(i.createdAt),
  expires_at: isoTime(i.expiresAt),
})

/** The acceptance page: the token in the query string, which the access log never writes. */
export const invitationPath = (token: string) => `/app/invitation?token=${encodeURIComponent(token)}`

const invitationUrl = (core: Core, token: string) => `${core.config.baseUrl}${invitationPath(token)}`

function invitationMail(core: Core, workspace: Workspace, i: MemberInvitation, token: string, by: Principal) {
  const inviter = by.kind === 'user' ? by.account.name || by.account.email : 'An administrator'
  const expires = isoTime(i.expiresAt).slice(0, 16).replace('T', ' ')
  return {
    to: i.email,
    subject: `Join ${workspace.name} on Gatehouse`,
    text: [
      `${inviter} invited you to the workspace ${workspace.name} on Gatehouse, as ${i.role}.`,
      '',
      `Open this link to accept. Without a Gatehouse account yet, create one with ${i.email} on the way:`,
      '',
      invitationUrl(core, token),
      '',
      `The link works once, until ${expires} UTC. If you did not expect this invitation, ignore this email.`,
    ].join('\n'),
    workspaceId: workspace.id,
  }
}

// Every change to a workspace's members holds this key until it commits: "the last owner stays" is
// a check-then-write, exact only when two changes (on two nodes) cannot interleave.
const membersKey = (workspaceId: string) => `workspace-members:${workspaceId}`

const memberIs = (workspaceId: string, accountId: string) =>
  and(eq(workspaceMembers.workspaceId, workspaceId), eq(workspaceMembers.accountId, accountId))

async function memberRow(tx: Conn, workspaceId: string, accountId: string): Promise<Member | undefined> {
  const [row] = await tx.db.select().from(workspaceMembers).where(memberIs(workspaceId, accountId)).limit(1)
  return row
}

/**
 * Granting access is a person's act: a key's token (which outlives its key's revocation by up to
 * 15 minutes) must not turn itself into a member that never expires.
 */
function refuseKeys(by: Caller): void {
  if (by.principal.kind === 'key') throw appError(MemberErrors.PEOPLE_ONLY, 403)
}

/** Owners alone grant, change or remove the owner role (read in the transaction: a role as it is now). */
async function requireOwner(tx: Conn, workspaceId: string, by: Principal): Promise<void> {
  const own = by.kind === 'user' ? await memberRow(tx, workspaceId, by.account.id) : undefined
  if (own?.role !== 'owner') throw appError(MemberErrors.OWNER_ONLY, 403)
}

/**
 * `leaving` stops being an owner: refused (409) when no other owner is left; otherwise, when it is the
 * workspace's organisation (`owner_id`: billing, rate limits), that passes to the longest-standing
 * other owner, in the same transaction.
 */
async function handOver(tx: Conn, workspaceId: string, leaving: string): Promise<void> {
  const [next] = await tx.db
    .select({ accountId: workspaceMembers.accountId })
    .from(workspaceMembers)
    .where(
      and(
        eq(workspaceMembers.workspaceId, workspaceId),
        eq(workspaceMembers.role, 'owner'),
        ne(workspaceMembers.accountId, leaving),
      ),
    )
    .orderBy(asc(workspaceMembers.createdAt), asc(workspaceMembers.accountId))
    .limit(1)
  if (!next) throw appError(MemberErrors.LAST_OWNER, 409)
  await tx.db
    .update(workspaces)
    .set({ ownerId: next.accountId })
    .where(and(eq(workspaces.id, workspaceId), eq(workspaces.ownerId, leaving)))
}

/**
 * A workspace's members (platform accounts with a role) and the invitations of addresses without an
 * account. Who may call is the guard's (`workspace:read` to list, `workspace:admin` to change); the
 * owner rules and the last owner are decided here, in the change's transaction. Every change is
 * audited, never emitted (SPEC "Events": role changes are in the audit log only).
 */
export function createMemberService(core: Core) {
  /** A change's audit entry, in its transaction: who did it to which member or invitation. */
  const record = (
    tx: Conn,
    workspace: Workspace,
    by: Caller,
    action: string,
    target: { type: 'member' | 'member_invitation'; id: string },
    changes: FieldChanges,
  ) => core.audit({ workspaceId: workspace.id, actor: by.actor, action, target, changes }, { tx })

  return {
    /** Members in the order they joined, then pending invitations (expired ones too, until cancelled). */
    async list(workspace: Workspace): Promise<MemberModel.Out[]> {
      const members = await core.db
        .select()
        .from(workspaceMembers)
        .where(eq(workspaceMembers.workspaceId, workspace.id))
        .orderBy(asc(workspaceMembers.createdAt), asc(workspaceMembers.accountId))
      const ids = members.map((m) => m.accountId)
      const accounts = new Map((await findAccounts(core, PLATFORM, ids)).map((a) => [a.id, a]))
      const invitations = await core.db
        .select()
        .from(memberInvitations)
        .where(eq(memberInvitations.workspaceId, workspace.id))
        .orderBy(asc(memberInvitations.createdAt), asc(memberInvitations.id))
      return [
        ...members.map((m) => memberOut(m, accounts.get(m.accountId))),
        ...invitations.map(invitationOut),
      ]
    },

    /** One member as listed; undefined when the account is not a member. */
    async get(workspace: Workspace, accountId: string): Promise<MemberModel.Out | undefined> {
      const member = await memberRow(core.store, workspace.id, accountId)
      if (!member) return undefined
      const [account] = await findAccounts(core, PLATFORM, [accountId])
      return memberOut(member, account)
    },

    /** The role of an account in the workspace; undefined when it is not a member. */
    async roleOf(workspaceId: string, accountId: string): Promise<MemberRole | undefined> {
      return (await memberRow(core.store, workspaceId, accountId))?.role
    },

    /**
     * Adds a platform account that proved its address at once (`member.added`), or invites any other
     * address by mail
     * (`member.invited`: a single-use link valid 7 days, its token stored hashed, the mail queued in
     * the same transaction). 409 for a member already there or a live invitation; an expired one is
     * replaced. Only an owner adds an owner.
     */
    async add(workspace: Workspace, by: Caller, input: MemberModel.Add): Promise<MemberModel.Out> {
      if (workspace.state === 'deleting') throw appError(MemberErrors.WORKSPACE_DELETING, 409)
      refuseKeys(by)
      const email = normalizeEmail(input.email)
      // Added at once only when the account has proved the address: anyone may sign up with an
      // address they do not own, so an unproved one gets the mailed link like a stranger would.
      const found = await findAccountByEmail(core, PLATFORM, email)
      const account = found?.emailVerified ? found : undefined
      const now = core.clock.now()
      return core.store.tx(async (tx) => {
        await tx.serialize(membersKey(workspace.id))
        if (input.role === 'owner') await requireOwner(tx, workspace.id, by.principal)
        const existing = and(
          eq(memberInvitations.workspaceId, workspace.id),
          eq(memberInvitations.email, email),
        )
        if (account) {
          const [added] = await tx.db
            .insert(workspaceMembers)
            .values({
              workspaceId: workspace.id,
              accountId: account.id,
              role: input.role,
              createdAt: now,
              updatedAt: now,
            })
            .onConflictDoNothing()
            .returning()
          if (!added) throw appError(MemberErrors.MEMBER_EXISTS, 409, { loc: ['body', 'email'] })
          // Invited before they had an account: the membership supersedes the link.
          await tx.db.delete(memberInvitations).where(existing)
          await record(
            tx,
            workspace,
            by,
            'member.added',
            { type: 'member', id: account.id },
            { role: { to: input.role } },
          )
          return memberOut(added, account)
        }
        const [pending] = await tx.db.select().from(memberInvitations).where(existing).limit(1)
        if (pending && pending.expiresAt > now)
          throw appError(MemberErrors.INVITATION_PENDING, 409, { loc: ['body', 'email'] })
        if (pending) await tx.db.delete(memberInvitations).where(eq(memberInvitations.id, pending.id))
        const token = randomToken(32)
        const [invitation] = await tx.db
          .insert(memberInvitations)
          .values({
            id: newId('inv', now),
            workspaceId: workspace.id,
            email,
            role: input.role,
            tokenHash: sha256Hex(token),
            invitedBy: by.actor.id,
            createdAt: now,
            expiresAt: now + INVITE_TTL_MS,
          })
          .returning()
        if (!invitation) throw new Error('the invitation was not written')
        await sendMail(core, invitationMail(core, workspace, invitation, token, by.principal), { tx })
        await record(
          tx,
          workspace,
          by,
          'member.invited',
          { type: 'member_invitation', id: invitation.id },
          { email: { to: email }, role: { to: input.role } },
        )
        return invitationOut(invitation)
      })
    },

    /**
     * Gives a member another role (`member.role_changed`); the same role changes nothing. Owners alone
     * make or unmake an owner (403), and the last owner stays one (409).
     */
    async changeRole(
      workspace: Workspace,
      by: Caller,
      accountId: string,
      role: MemberRole,
    ): Promise<MemberModel.Out> {
      refuseKeys(by)
      const now = core.clock.now()
      const changed = await core.store.tx(async (tx) => {
        await tx.serialize(membersKey(workspace.id))
        const member = await memberRow(tx, workspace.id, accountId)
        if (!member) throw appError(MemberErrors.MEMBER_NOT_FOUND, 404)
        if (member.role === 'owner' || role === 'owner') await requireOwner(tx, workspace.id, by.principal)
        if (member.role === role) return member
        if (member.role === 'owner') await handOver(tx, workspace.id, accountId)
        const [updated] = await tx.db
          .update(workspaceMembers)
          .set({ role, updatedAt: now })
          .where(memberIs(workspace.id, accountId))
          .returning()
        await record(
          tx,
          workspace,
          by,
          'member.role_changed',
          { type: 'member', id: accountId },
          { role: { from: member.role, to: role } },
        )
        return updated!
      })
      const [account] = await findAccounts(core, PLATFORM, [accountId])
      return memberOut(changed, account)
    },

    /**
     * Removes a member (`member.removed`); idempotent, so one already gone is not an error. Removing
     * an owner takes an owner (403), and the last owner stays (409). Their access ends with this
     * request: the guard reads the membership on every one.
     */
    async remove(workspace: Workspace, by: Caller, accountId: string): Promise<void> {
      await core.store.tx(async (tx) => {
        await tx.serialize(membersKey(workspace.id))
        const member = await memberRow(tx, workspace.id, accountId)
        if (!member) return
        if (member.role === 'owner') {
          await requireOwner(tx, workspace.id, by.principal)
          await handOver(tx, workspace.id, accountId)
        }
        await tx.db.delete(workspaceMembers).where(memberIs(workspace.id, accountId))
        await record(
          tx,
          workspace,
          by,
          'member.removed',
          { type: 'member', id: accountId },
          { role: { from: member.role } },
        )
      })
    },

    /**
     * A fresh link of a pending invitation, for the platform administrator to hand over while the
     * workspace's mail goes nowhere (`member.invitation_link_issued`); 404 for anyone else, as if
     * there were none. Links are stored hashed, so this is a new one, valid 7 days from now: any
     * link made before stops working.
     */
    async issueInvitationLink(
      workspace: Workspace,
      by: Caller,
      invitationId: string,
    ): Promise<{ email: string; link: string; expiresAt: string }> {
      if (!(await mayCopyMailedLinks(core, by.principal, workspace.id))) throw notFound('Invitation')
      const token = randomToken(32)
      const now = core.clock.now()
      return core.store.tx(async (tx) => {
        const [renewed] = await tx.db
          .update(memberInvitations)
          .set({ tokenHash: sha256Hex(token), expiresAt: now + INVITE_TTL_MS })
          .where(and(eq(memberInvitations.workspaceId, workspace.id), eq(memberInvitations.id, invitationId)))
          .returning()
        if (!renewed) throw notFound('Invitation')
        await record(
          tx,
          workspace,
          by,
          'member.invitation_link_issued',
          { type: 'member_invitation', id: renewed.id },
          { email: { to: renewed.email } },
        )
        return {
          email: renewed.email,
          link: invitationUrl(core, token),
          expiresAt: isoTime(renewed.expiresAt),
        }
      })
    },

    /** Cancels a pending invitation (`member.invitation_cancelled`): its link stops working. Idempotent. */
    async cancelInvitation(workspace: Workspace, by: Caller, invitationId: string): Promise<void> {
      await core.store.tx(async (tx) => {
        const [gone] = await tx.db
          .delete(memberInvitations)
          .where(and(eq(memberInvitations.workspaceId, workspace.id), eq(memberInvitations.id, invitationId)))
          .returning()
        if (!gone) return
        await record(
          tx,
          workspace,
          by,
          'member.invitation_cancelled',
          { type: 'member_invitation', id: gone.id },
          { email: { from: gone.email }, role: { from: gone.role } },
        )
      })
    },
  }
}
