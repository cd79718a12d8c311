import { Elysia, t } from 'elysia'
import type { AuthPlugin } from '../../access/guard'
import type { Core } from '../../core'
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
    .get('/:app_id', ({ workspace, params }) => service.get(workspace, params.app_id), {
      params: AppModel.params,
      scope: 'workspace:read',
      response: AppModel.out,
      detail: { tags, summary: 'Get an app (never its secret)' },
    })
    .patch(
      '/:app_id',
      ({ workspace, actor, params, body }) => service.update(workspace, actor, params.app_id, body),
      {
        params: AppModel.params,
        body: AppModel.update,
        scope: 'workspace:write',
        response: AppModel.out,
        detail: {
          tags,
          summary: 'Change the name, redirect URIs, post-logout redirect URIs or development mode',
          description:
            "AppCreate's rules apply to the lists as they will be with the new `dev_mode`; `app_type` " +
            'cannot change (422). Audited as `app.updated`; every node uses the new settings from ' +
            'the next request (a URI removed is refused at once). No webhook event.',
        },
      },
    )
    .post(
      '/:app_id/rotate-secret',
      async ({ workspace, actor, params, body, set }) => {
        set.headers['cache-control'] = 'no-store'
        return service.rotateSecret(workspace, actor, params.app_id, body.grace_hours)
      },
      {
        params: AppModel.params,
        body: AppModel.rotate,
        scope: 'workspace:write',
        response: AppModel.rotated,
        detail: {
          tags,
          summary: "Rotate a web app's client secret; the new one is shown once",
          description:
            'With no body (or `{}`) the previous secret is refused at once; it is accepted ' +
            'beside the new one until `previous_secret_expires_at` when `grace_hours` (1..24) is given. ' +
            'The answer is `Cache-Control: no-store`. 409 for spa and ' +
            'native apps (public clients have no secret). Audited as `app.secret_rotated`.',
        },
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
