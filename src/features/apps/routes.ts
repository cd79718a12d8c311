import { Elysia, t } from 'elysia'
import type { Core } from '../../core'
import type { AuthPlugin } from '../../shared/plugins/auth'
import { WorkspaceModel } from '../workspaces/model'
import type { Workspace } from '../workspaces/service'
import { AppModel } from './model'
import { createAppService } from './service'

const tags = ['apps']

/** SPEC "Apps": OIDC applications of the workspace's Default project. */
export function appRoutes(core: Core, auth: AuthPlugin<Workspace>) {
  const service = createAppService(core)
  return new Elysia({ name: 'app-routes', prefix: '/v1/workspaces/:workspace_id/apps' })
    .use(auth)
    .get('/', ({ workspace }) => service.list(workspace), {
      params: WorkspaceModel.params,
      scope: 'workspace:read',
      response: AppModel.list,
      detail: { tags, summary: 'List apps' },
    })
    .post(
      '/',
      async ({ workspace, actor, body, set }) => {
        set.status = 201
        return (await service.create(workspace, actor, body)).credentials
      },
      {
        params: WorkspaceModel.params,
        body: AppModel.create,
        scope: 'workspace:write',
        response: { 201: AppModel.credentials },
        detail: { tags, summary: 'Create an app; the client secret (web apps) is shown once' },
      },
    )
    .delete(
      '/:app_id',
      async ({ workspace, actor, params }) => {
        await service.remove(workspace, actor, params.app_id)
        return { deleted: true }
      },
      {
        params: AppModel.params,
        scope: 'workspace:write',
        response: t.Object({ deleted: t.Boolean() }),
        detail: { tags, summary: 'Delete an app (idempotent)' },
      },
    )
}
