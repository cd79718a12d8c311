import { Elysia } from 'elysia'
import type { AuthPlugin } from '../../access/guard'
import type { Core } from '../../core'
import { WorkspaceModel } from '../workspaces/model'
import type { Workspace } from '../workspaces/service'
import { BrandingModel } from './model'
import { createBrandingService } from './service'

const tags = ['branding']

/** SPEC "SMTP and branding": a workspace's branding and logo. */
export function brandingRoutes(core: Core, auth: AuthPlugin<Workspace>) {
  const service = createBrandingService(core)
  return new Elysia({ name: 'branding-routes', prefix: '/v1/workspaces/:workspace_id/branding' })
    .use(auth)
    .get('/', ({ workspace }) => service.get(workspace), {
      params: WorkspaceModel.params,
      scope: 'workspace:read',
      response: BrandingModel.view,
      detail: { tags, summary: 'Read the branding of the hosted pages and mails' },
    })
    .patch('/', ({ workspace, actor, body }) => service.update(workspace, actor, body), {
      params: WorkspaceModel.params,
      body: BrandingModel.update,
      scope: 'workspace:write',
      response: BrandingModel.view,
      detail: {
        tags,
        summary: 'Change the branding',
        description:
          'Omitted fields keep their value; null puts the platform’s back. On every hosted page of the instance at once.',
      },
    })
    .post(
      '/logo',
      async ({ workspace, actor, body }) =>
        service.uploadLogo(workspace, actor, new Uint8Array(await body.logo.arrayBuffer())),
      {
        params: WorkspaceModel.params,
        body: BrandingModel.logo,
        scope: 'workspace:write',
        response: BrandingModel.view,
        detail: {
          tags,
          summary: 'Upload the logo (multipart field `logo`)',
          description:
            'PNG, JPEG, WebP or SVG, at most 1 MiB, the type read from the content. An SVG is sanitised; one with a script, an event handler, an external reference or a foreignObject is refused (422).',
        },
      },
    )
    .delete('/logo', ({ workspace, actor }) => service.removeLogo(workspace, actor), {
      params: WorkspaceModel.params,
      scope: 'workspace:write',
      response: BrandingModel.view,
      detail: { tags, summary: 'Remove the logo (idempotent)' },
    })
}
