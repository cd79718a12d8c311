import { Elysia, t } from 'elysia'
import type { AuthPlugin } from '../../access/guard'
import type { Actor } from '../../access/model'
import { holdsScope } from '../../access/scopes'
import type { Core } from '../../core'
import { AppError } from '../../shared/errors'
import { defineForm, type FormField, formField } from '../../shared/forms'
import type { SidebarLink } from '../../shared/views/components'
import { settingsPage } from '../../shared/views/crud'
import { Shell } from '../../shared/views/layout'
import { html, navigate, shellUser } from '../../shared/views/respond'
import { WorkspaceModel } from '../workspaces/model'
import type { Workspace } from '../workspaces/service'
import { WebhookErrors } from './errors'
import { WebhookModel } from './model'
import { createWebhookService, webhookSuccessRates } from './service'
import { EndpointSection, type LogFilter, WebhooksNotAllowed, WebhooksSection, webhooksPath } from './views'

const views = { detail: { tags: ['views'] } }
const noStore = { 'cache-control': 'no-store' }

/** An optional text input: empty leaves the property out. */
const optionalText: FormField = { read: (raw) => raw.trim() || undefined }

/** The form reads into the API's model: the rules and their messages are the API's. */
const createForm = defineForm(WebhookModel.create, {
  url: formField.text,
  description: optionalText,
  // One `events` field per ticked box, joined one a line (sentEvents) so the form can show them again.
  events: formField.lines,
})

/** The ticked boxes as one value: a list when several were ticked, a string for one, absent for none. */
function sentEvents(body: unknown): Record<string, unknown> {
  const sent = { ...((body ?? {}) as Record<string, unknown>) }
  if (Array.isArray(sent.events)) sent.events = sent.events.filter((e) => typeof e === 'string').join('\n')
  return sent
}

/** The endpoint page's query: the log's tab and page. */
const logQuery = t.Object({
  status: t.Optional(t.Literal('failed')),
  cursor: t.Optional(t.String({ maxLength: 200 })),
})
const filterOf = (query: { status?: 'failed' }): LogFilter => (query.status === 'failed' ? 'failed' : 'all')

/**
 * Settings → Webhooks: the endpoints with their status and success rate, creating one (its secret
 * shown once), and each endpoint's page (its delivery log with a Failed tab, sending a test event,
 * redelivering, reactivating, enabling or disabling, rotating the secret, deleting it). All of it
 * takes `workspace:write`, as on the API; a member without it is told so on the list page.
 */
export function webhookPages(core: Core, auth: AuthPlugin<Workspace>, sidebar: SidebarLink[]) {
  const service = createWebhookService(core)
  const path = '/app/workspaces/:workspace_id/settings/webhooks'
  const hookPath = `${path}/:webhook_id`

  const section = async (w: Workspace, extra: Partial<Parameters<typeof WebhooksSection>[0]> = {}) => (
    <WebhooksSection
      workspaceId={w.id}
      items={(await service.list(w)).items}
      rates={await webhookSuccessRates(core, w)}
      billing={core.config.billing.stripe !== null}
      {...extra}
    />
  )

  /** What the endpoint's section shows: the endpoint, its success rate and a page of its log. */
  const endpointProps = async (
    w: Workspace,
    hookId: string,
    query: { status?: 'failed'; cursor?: string },
  ) => {
    const filter = filterOf(query)
    const hook = await service.get(w, hookId)
    const log = await service.deliveries(w, hookId, {
      status: filter === 'failed' ? 'failed_permanent' : undefined,
      cursor: query.cursor,
    })
    const rates = await webhookSuccessRates(core, w)
    return { workspaceId: w.id, hook, rate: rates.get(hook.id), log, filter, cursor: query.cursor }
  }

  const endpoint = async (
    w: Workspace,
    hookId: string,
    query: { status?: 'failed'; cursor?: string },
    extra: Partial<Parameters<typeof EndpointSection>[0]> = {},
  ) => <EndpointSection {...(await endpointProps(w, hookId, query))} {...extra} />

  /** An endpoint action: the service call, then `#webhook` redrawn with what it did. */
  const action =
    (run: (w: Workspace, actor: Actor, hookId: string) => Promise<string>) =>
    async (ctx: {
      workspace: Workspace
      actor: Actor
      params: { webhook_id: string }
      query: { status?: 'failed' }
    }) => {
      const done = await run(ctx.workspace, ctx.actor, ctx.params.webhook_id)
      return html(await endpoint(ctx.workspace, ctx.params.webhook_id, ctx.query, { done }), 200, noStore)
    }

  const settings = settingsPage({
    nav: sidebar,
    here: 'settings/webhooks',
    heading: 'Webhooks',
    title: 'webhooks',
    lead: (
      <>
        Endpoints that receive this workspace's events as signed HTTP POSTs, retried for up to 48 hours until
        they answer 2xx.
      </>
    ),
  })

  return new Elysia({ name: 'webhook-pages' })
    .use(auth)
    .get(
      path,
      settings.get(async (w: Workspace, scopes) =>
        holdsScope(scopes, 'workspace:write') ? await section(w) : <WebhooksNotAllowed />,
      ),
      { params: WorkspaceModel.params, scope: 'workspace:read', ...views },
    )
    .post(
      path,
      async ({ actor, workspace: w, body }) => {
        const sent = sentEvents(body)
        try {
          const created = await createForm.submit(sent, (input) => service.create(w, actor, input))
          if (!created.ok)
            return settings.answer(
              false,
              await section(w, { form: { values: created.values, errors: created.errors } }),
            )
          return settings.answer(true, await section(w, { created: created.result }))
        } catch (e) {
          // At most 50 endpoints: said over the form, which keeps what was typed.
          if (!(e instanceof AppError) || e.code !== WebhookErrors.TOO_MANY_WEBHOOKS.code) throw e
          const values = {
            url: typeof sent.url === 'string' ? sent.url : '',
            description: typeof sent.description === 'string' ? sent.description : '',
            events: typeof sent.events === 'string' ? sent.events : '',
          }
          return html(await section(w, { form: { values, errors: { url: `${e.message}.` } } }), 409, noStore)
        }
      },
      { params: WorkspaceModel.params, scope: 'workspace:write', ...views },
    )
    .get(
      hookPath,
      async ({ principal, workspace: w, params, query }) => {
        const props = await endpointProps(w, params.webhook_id, query)
        return html(
          <Shell title={`Webhook · ${w.name}`} user={shellUser(principal)} section="workspaces">
            <p class="hint">
              <a href={`/app/workspaces/${w.id}`} safe>
                {w.name}
              </a>{' '}
              / <a href={webhooksPath(w.id)}>Webhooks</a> /
            </p>
            <h1>Webhook endpoint</h1>
            <EndpointSection {...props} />
          </Shell>,
          200,
          noStore,
        )
      },
      { params: WebhookModel.params, query: logQuery, scope: 'workspace:write', ...views },
    )
    .post(
      `${hookPath}/test`,
      action(async (w, _actor, id) => {
        const sent = await service.sendTest(w, id)
        return `Test event ${sent.event_id} queued.`
      }),
      { params: WebhookModel.params, query: logQuery, scope: 'workspace:write', ...views },
    )
    .post(
      `${hookPath}/reactivate`,
      action(async (w, actor, id) => {
        await service.reactivate(w, actor, id)
        return 'Reactivated: the deliveries that waited are being sent.'
      }),
      { params: WebhookModel.params, query: logQuery, scope: 'workspace:write', ...views },
    )
    .post(
      `${hookPath}/enable`,
      action(async (w, actor, id) => {
        await service.update(w, actor, id, { enabled: true })
        return 'Enabled: new events are sent to it again.'
      }),
      { params: WebhookModel.params, query: logQuery, scope: 'workspace:write', ...views },
    )
    .post(
      `${hookPath}/disable`,
      action(async (w, actor, id) => {
        await service.update(w, actor, id, { enabled: false })
        return 'Disabled: new events are not sent to it.'
      }),
      { params: WebhookModel.params, query: logQuery, scope: 'workspace:write', ...views },
    )
    .post(
      `${hookPath}/rotate-secret`,
      async ({ workspace: w, actor, params, query }) => {
        const rotated = await service.rotateSecret(w, actor, params.webhook_id)
        return html(await endpoint(w, params.webhook_id, query, { rotated }), 200, noStore)
      },
      { params: WebhookModel.params, query: logQuery, scope: 'workspace:write', ...views },
    )
    .post(
      `${hookPath}/deliveries/:delivery_id/redeliver`,
      async ({ workspace: w, actor, params, query }) => {
        const d = await service.redeliver(w, actor, params.webhook_id, params.delivery_id)
        const done = `Delivery of ${d.event_type} (${d.event_id}) queued again.`
        return html(await endpoint(w, params.webhook_id, query, { done }), 200, noStore)
      },
      { params: WebhookModel.deliveryParams, query: logQuery, scope: 'workspace:write', ...views },
    )
    .delete(
      hookPath,
      async ({ request, workspace: w, actor, params }) => {
        await service.remove(w, actor, params.webhook_id)
        return navigate(request, webhooksPath(w.id))
      },
      { params: WebhookModel.params, scope: 'workspace:write', ...views },
    )
}
