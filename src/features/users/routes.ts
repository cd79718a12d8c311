import { Elysia, t } from 'elysia'
import type { AuthPlugin } from '../../access/guard'
import type { Core } from '../../core'
import { WorkspaceModel } from '../workspaces/model'
import type { Workspace } from '../workspaces/service'
import { UserModel } from './model'
import { createUserService } from './service'

const tags = ['users']

/** SPEC "Login policy, IdPs, users": the users of the workspace's identity instance. */
export function userRoutes(core: Core, auth: AuthPlugin<Workspace>) {
  const service = createUserService(core)
  return new Elysia({ name: 'user-routes', prefix: '/v1/workspaces/:workspace_id/users' })
    .use(auth)
    .get('/', ({ workspace, query }) => service.list(workspace, query), {
      params: WorkspaceModel.params,
      query: UserModel.listQuery,
      scope: 'workspace:read',
      response: UserModel.list,
      detail: { tags, summary: 'List users (limit, cursor, q: email or name prefix)' },
    })
    .post(
      '/invite',
      async ({ workspace, actor, body, set }) => {
        set.status = 201
        return (await service.invite(workspace, actor, body)).invited
      },
      {
        params: WorkspaceModel.params,
        body: UserModel.invite,
        scope: 'workspace:write',
        response: { 201: UserModel.invited },
        detail: {
          tags,
          summary: 'Invite a user: a mail with a single-use link valid 7 days (409 if the email is known)',
        },
      },
    )
    .delete(
      '/:user_id',
      async ({ workspace, actor, params }) => {
        await service.remove(workspace, actor, params.user_id)
        return { deleted: true }
      },
      {
        params: UserModel.params,
        scope: 'workspace:write',
        response: t.Object({ deleted: t.Boolean() }),
        detail: { tags, summary: 'Delete a user (idempotent); ends their sessions and tokens at once' },
      },
    )
    .delete(
      '/:user_id/mfa',
      async ({ workspace, actor, params }) => {
        await service.resetMfa(workspace, actor, params.user_id)
        return { reset: true }
      },
      {
        params: UserModel.params,
        scope: 'workspace:admin',
        response: t.Object({ reset: t.Boolean() }),
        detail: { tags, summary: "Reset a user's MFA: they enrol again at their next sign-in" },
      },
    )
}
