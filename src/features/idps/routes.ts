import { Elysia } from 'elysia'
import type { AuthPlugin } from '../../access/guard'
import type { Core } from '../../core'
import { WorkspaceModel } from '../workspaces/model'
import type { Workspace } from '../workspaces/service'
import { IdpModel } from './model'
import { createIdpService } from './service'

const tags = ['idps']

/** SPEC "Login policy, IdPs, users": a workspace's external identity providers. */
export function idpRoutes(core: Core, auth: AuthPlugin<Workspace>) {
  const service = createIdpService(core)
  return new Elysia({ name: 'idp-routes', prefix: '/v1/workspaces/:workspace_id/idps' })
    .use(auth)
    .get('/', ({ workspace }) => service.list(workspace), {
      params: WorkspaceModel.params,
      scope: 'workspace:read',
      response: IdpModel.list,
      detail: { tags, summary: 'List identity providers (never their client secrets)' },
    })
    .post(
      '/',
      async ({ workspace, actor, scopes, body, set }) => {
        set.status = 201
        return service.create(workspace, { actor, scopes: scopes ?? [] }, body)
      },
      {
        params: WorkspaceModel.params,
        body: IdpModel.create,
        scope: 'workspace:write',
        response: { 201: IdpModel.out },
        detail: {
          tags,
          summary: 'Add an identity provider',
          description:
            'Created and active: it is on the sign-in page when this answers. Register `redirect_uri` at the provider. `trust_email` and `trust_mfa` need `workspace:admin` (403 otherwise).',
        },
      },
    )
    .delete(
      '/:idp_id',
      async ({ workspace, actor, params }) => {
        await service.remove(workspace, actor, params.idp_id)
        return { deleted: true as const }
      },
      {
        params: IdpModel.params,
        scope: 'workspace:write',
        response: IdpModel.deleted,
        detail: {
          tags,
          summary: 'Remove an identity provider (off the sign-in page, then deleted; idempotent)',
        },
      },
    )
}
