import { Elysia } from 'elysia'
import type { AuthPlugin } from '../../access/guard'
import type { Core } from '../../core'
import { WorkspaceModel } from '../workspaces/model'
import type { Workspace } from '../workspaces/service'
import { WebhookModel } from './model'
import { createWebhookService } from './service'

const tags = ['webhooks']
const scope = 'workspace:write' as const

/** DESIGN "Webhooks": a workspace's endpoints, their secrets and their deliveries. */
export function webhookRoutes(core: Core, auth: AuthPlugin<Workspace>) {
  const service = createWebhookService(core)
  return new Elysia({ name: 'webhook-routes', prefix: '/v1/workspaces/:workspace_id/webhooks' })
    .use(auth)
    .get('/', ({ workspace }) => service.list(workspace), {
      params: WorkspaceModel.params,
      scope,
      response: WebhookModel.list,
      detail: { tags, summary: 'List webhook endpoints (never their secrets)' },
    })
    .post(
      '/',
      async ({ workspace, actor, body, set }) => {
        set.status = 201
        return service.create(workspace, actor, body)
      },
      {
        params: WorkspaceModel.params,
        body: WebhookModel.create,
        scope,
        response: { 201: WebhookModel.withSecret },
        detail: {
          tags,
          summary: 'Create a webhook endpoint',
          description: 'The answer carries the signing `secret`, shown this once.',
        },
      },
    )
    .get('/:webhook_id', ({ workspace, params }) => service.get(workspace, params.webhook_id), {
      params: WebhookModel.params,
      scope,
      response: WebhookModel.out,
      detail: { tags, summary: 'Get a webhook endpoint' },
    })
    .patch(
      '/:webhook_id',
      ({ workspace, actor, params, body }) => service.update(workspace, actor, params.webhook_id, body),
      {
        params: WebhookModel.params,
        body: WebhookModel.update,
        scope,
        response: WebhookModel.out,
        detail: { tags, summary: 'Change the URL, the events, the description, or enable/disable' },
      },
    )
    .delete(
      '/:webhook_id',
      async ({ workspace, actor, params }) => {
        await service.remove(workspace, actor, params.webhook_id)
        return { deleted: true as const }
      },
      {
        params: WebhookModel.params,
        scope,
        response: WebhookModel.deleted,
        detail: { tags, summary: 'Delete a webhook endpoint and its deliveries (idempotent)' },
      },
    )
    .post(
      '/:webhook_id/rotate-secret',
      ({ workspace, actor, params }) => service.rotateSecret(workspace, actor, params.webhook_id),
      {
        params: WebhookModel.params,
        scope,
        response: WebhookModel.withSecret,
        detail: {
          tags,
          summary: 'Rotate the signing secret',
          description: 'The new secret is shown once; the old one keeps signing beside it for 24 hours.',
        },
      },
    )
    .post(
      '/:webhook_id/reactivate',
      ({ workspace, actor, params }) => service.reactivate(workspace, actor, params.webhook_id),
      {
        params: WebhookModel.params,
        scope,
        response: WebhookModel.out,
        detail: { tags, summary: 'Reactivate a paused endpoint: what waited is sent' },
      },
    )
    .post(
      '/:webhook_id/test',
      async ({ workspace, params, set }) => {
        set.status = 202
        return service.sendTest(workspace, params.webhook_id)
      },
      {
        params: WebhookModel.params,
        scope,
        response: { 202: WebhookModel.tested },
        detail: { tags, summary: 'Send a `webhook.test` event to this endpoint' },
      },
    )
    .get(
      '/:webhook_id/deliveries',
      ({ workspace, params, query }) => service.deliveries(workspace, params.webhook_id, query),
      {
        params: WebhookModel.params,
        query: WebhookModel.deliveriesQuery,
        scope,
        response: WebhookModel.deliveries,
        detail: { tags, summary: "An endpoint's deliveries, newest first (status, limit, cursor)" },
      },
    )
    .post(
      '/:webhook_id/deliveries/:delivery_id/redeliver',
      async ({ workspace, actor, params, set }) => {
        set.status = 202
        return service.redeliver(workspace, actor, params.webhook_id, params.delivery_id)
      },
      {
        params: WebhookModel.deliveryParams,
        scope,
        response: { 202: WebhookModel.delivery },
        detail: { tags, summary: 'Send a delivery again (a fresh retry schedule)' },
      },
    )
}
