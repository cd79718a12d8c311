import { Value } from '@sinclair/typebox/value'
import { Elysia, ParseError, t, ValidationError } from 'elysia'
import type { AuthPlugin } from '../../access/guard'
import type { Core } from '../../core'
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
      async ({ workspace, principal, actor, body, set }) => {
        // Elysia checks an optional body only when it is a non-empty object (`{}`, or JSON that is
        // not an object, arrives unchecked): a body that was sent is meant as a confirmation.
        if (body !== undefined && !Value.Check(WorkspaceModel.remove, body))
          throw new ValidationError('body', WorkspaceModel.remove, body)
        const w = await service.remove(workspace, { principal, actor }, body?.confirm)
        set.status = 202
        return { id: w.id, state: 'deleting' as const }
      },
      {
        params: WorkspaceModel.params,
        body: t.Optional(WorkspaceModel.remove),
        // Elysia drops an optional JSON body that does not parse; it is refused here as on every
        // other route (422 json_invalid to everyone alike, before the guard), never taken for none.
        transform({ body, request }) {
          if (body === undefined && request.body !== null) throw new ParseError()
        },
        scope: 'workspace:admin',
        response: { 202: WorkspaceModel.deleted },
        detail: {
          tags,
          summary: 'Delete a workspace (its instance is torn down in the background)',
          description:
            'A person needs no body. A body `{"confirm": "Acme"}`, when sent, must carry the workspace\'s ' +
            'exact name; a machine key must send it. A missing `confirm` in a body, a machine key without ' +
            'one, or any other name answers 422 at `loc: ["body", "confirm"]` and deletes nothing. The ' +
            'instance stops serving at once; its data, audit log included, is purged by a background ' +
            'job. Deleting a workspace already being deleted answers 202 again.',
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
