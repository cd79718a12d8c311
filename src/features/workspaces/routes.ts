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
      async ({ principal, actor, body, set }) => {
        set.status = 201
        return out(await service.create(principal.account.id, actor, body.name))
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
    .patch(
      '/:workspace_id',
      async ({ workspace, actor, scopes, body }) =>
        out(await service.update(workspace, { actor, scopes }, body)),
      {
        params: WorkspaceModel.params,
        body: WorkspaceModel.update,
        scope: 'workspace:write',
        response: WorkspaceModel.out,
        detail: {
          tags,
          summary:
            'Change a workspace: its name, and on Pro and above its identity-plane rate (omitted fields keep their value)',
        },
      },
    )
    .delete(
      '/:workspace_id',
      async ({ workspace, actor, body, set }) => {
        const w = await service.remove(workspace, actor, body.confirm)
        set.status = 202
        return { id: w.id, state: 'deleting' as const }
      },
      {
        params: WorkspaceModel.params,
        body: WorkspaceModel.remove,
        scope: 'workspace:admin',
        response: { 202: WorkspaceModel.deleted },
        detail: {
          tags,
          summary: 'Delete a workspace, confirmed by its name (its instance is torn down in the background)',
          description:
            'The body must carry the workspace\'s exact name: `{"confirm": "Acme"}`. A missing body or ' +
            '`confirm`, or any other value, answers 422 (`loc: ["body", "confirm"]` for a wrong name) and ' +
            'deletes nothing. The instance stops serving at once; its data, audit log included, is ' +
            'purged by a background job. Deleting a workspace already being deleted answers 202 again.',
        },
      },
    )
    .post(
      '/:workspace_id/retry-provisioning',
      async ({ workspace, actor, set }) => {
        set.status = 202
        return out(await service.retry(workspace, actor))
      },
      {
        params: WorkspaceModel.params,
        scope: 'workspace:admin',
        response: { 202: WorkspaceModel.out },
        detail: { tags, summary: 'Re-run provisioning after a failure (a no-op in any other state)' },
      },
    )
}
