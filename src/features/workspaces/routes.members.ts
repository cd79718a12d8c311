import { Elysia } from 'elysia'
import type { AuthPlugin } from '../../access/guard'
import type { Core } from '../../core'
import { MemberModel, WorkspaceModel } from './model'
import type { Workspace } from './service'
import { createMemberService } from './service.members'

const tags = ['members']

/** DESIGN "Who may do what": the members of a workspace, their roles and their invitations. */
export function memberRoutes(core: Core, auth: AuthPlugin<Workspace>) {
  const service = createMemberService(core)
  return new Elysia({ name: 'member-routes', prefix: '/v1/workspaces/:workspace_id/members' })
    .use(auth)
    .get(
      '/',
      async ({ workspace }) => {
        const items = await service.list(workspace)
        return { items, total: items.length }
      },
      {
        params: WorkspaceModel.params,
        scope: 'workspace:read',
        response: MemberModel.list,
        detail: {
          tags,
          summary:
            'List members and pending invitations (not paged: members first, in the order they joined)',
        },
      },
    )
    .post(
      '/',
      async ({ workspace, principal, actor, body, set }) => {
        set.status = 201
        return service.add(workspace, { principal, actor }, body)
      },
      {
        params: WorkspaceModel.params,
        body: MemberModel.add,
        scope: 'workspace:admin',
        response: { 201: MemberModel.out },
        detail: {
          tags,
          summary:
            'Add a member: an existing platform account at once, any other address by an invitation mail',
          description:
            'A platform account with this email joins at once (`status: active`). Any other address gets ' +
            'a mail with a single-use link valid 7 days (`status: invited`); the invitation joins whichever ' +
            'account signs in with that address and accepts it. 409 when the account is a member already ' +
            'or the address has a live invitation (an expired one is replaced). Only an owner may add an owner (403).',
        },
      },
    )
    .patch(
      '/:account_id',
      async ({ workspace, principal, actor, params, body }) =>
        service.changeRole(workspace, { principal, actor }, params.account_id, body.role),
      {
        params: MemberModel.params,
        body: MemberModel.update,
        scope: 'workspace:admin',
        response: MemberModel.out,
        detail: {
          tags,
          summary: "Change a member's role; it acts on their next request",
          description:
            'Only an owner may make someone an owner or change an owner (403). The last owner stays one (409).',
        },
      },
    )
    .delete(
      '/:account_id',
      async ({ workspace, principal, actor, params }) => {
        await service.remove(workspace, { principal, actor }, params.account_id)
        return { deleted: true }
      },
      {
        params: MemberModel.params,
        scope: 'workspace:admin',
        response: MemberModel.deleted,
        detail: {
          tags,
          summary: 'Remove a member (idempotent); their access ends at once',
          description: 'Only an owner may remove an owner (403). The last owner cannot be removed (409).',
        },
      },
    )
    .delete(
      '/invitations/:invitation_id',
      async ({ workspace, principal, actor, params }) => {
        await service.cancelInvitation(workspace, { principal, actor }, params.invitation_id)
        return { deleted: true }
      },
      {
        params: MemberModel.invitationParams,
        scope: 'workspace:admin',
        response: MemberModel.deleted,
        detail: {
          tags,
          summary: 'Cancel a pending invitation by its `invitation_id` (idempotent); its link stops working',
        },
      },
    )
}
