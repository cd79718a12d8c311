import { Elysia } from 'elysia'
import type { Core } from '../../core'
import type { AuthPlugin } from '../../shared/plugins/auth'
import { WorkspaceModel } from './model'
import { createWorkspaceService, type Workspace, workspaceOut } from './service'

const tags = ['workspaces']

/** SPEC "Workspaces": create starts asynchronous provisioning; clients poll until `active`. */
export function workspaceRoutes(core: Core, auth: AuthPlugin<Workspace>) {
  const service = createWorkspaceService(core)
  const out = (w: Parameters<typeof workspaceOut>[1]) => workspaceOut(core, w)

  return new Elysia({ name: 'workspace-routes', prefix: '/v1/workspaces' })
    .use(auth)
    .get(
      '/',
      async ({ principal }) => {
        const items = (await service.list(principal.account.id)).map(out)
        return { items, total: items.length }
      },
      { auth: true, response: WorkspaceModel.list, detail: { tags, summary: 'List your workspaces' } },
    )
    .post(
      '/',
      async ({ principal, body, set }) => {
        set.status = 201
        return out(await service.create(principal.account.id, body.name))
      },
      {
        auth: true,
        body: WorkspaceModel.create,
        response: { 201: WorkspaceModel.out },
        detail: { tags, summary: 'Create a workspace (state provisioning)' },
      },
    )
    .get('/:workspace_id', ({ workspace }) => out(workspace), {
      params: WorkspaceModel.params,
      scope: 'workspace:read',
      response: WorkspaceModel.out,
      detail: { tags, summary: 'Get a workspace' },
    })
    .patch('/:workspace_id', async ({ workspace, body }) => out(await service.rename(workspace, body.name)), {
      params: WorkspaceModel.params,
      body: WorkspaceModel.update,
      scope: 'workspace:write',
      response: WorkspaceModel.out,
      detail: { tags, summary: 'Rename a workspace' },
    })
    .delete(
      '/:workspace_id',
      async ({ workspace, set }) => {
        set.status = 202
        const w = await service.remove(workspace)
        return { id: w.id, state: 'deleting' as const }
      },
      {
        params: WorkspaceModel.params,
        scope: 'workspace:admin',
        response: { 202: WorkspaceModel.deleted },
        detail: { tags, summary: 'Delete a workspace (its instance is torn down in the background)' },
      },
    )
    .post(
      '/:workspace_id/retry-provisioning',
      async ({ workspace, set }) => {
        set.status = 202
        return out(await service.retry(workspace))
      },
      {
        params: WorkspaceModel.params,
        scope: 'workspace:admin',
        response: { 202: WorkspaceModel.out },
        detail: { tags, summary: 'Re-run provisioning after a failure (a no-op in any other state)' },
      },
    )
}
