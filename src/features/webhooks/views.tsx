import { SUBSCRIBABLE_EVENTS, type SubscribableEvent } from '../../events/emit'
import type { FieldErrors, FormValues } from '../../shared/forms'
import { Alert, Copyable, EmptyState, FieldError, HxForm, Pager } from '../../shared/views/components'
import type { WebhookModel } from './model'

export const webhooksPath = (workspaceId: string) => `/app/workspaces/${workspaceId}/settings/webhooks`

export type CreateField = 'url' | 'description' | 'events'
/** A share of an endpoint's attempts over the last 24 h; absent when it had none. */
type SuccessRate = { ok: number; total: number }
/** Which deliveries the log lists: all of them, or the Failed tab's (`failed_permanent`). */
export type LogFilter = 'all' | 'failed'

type Created = WebhookModel.Out & { secret: string }

const time = (iso: string | null) => (iso ? `${iso.slice(0, 19).replace('T', ' ')} UTC` : '—')
/** A time in the log's narrow column: UTC, said once in its heading. */
const shortTime = (iso: string) => iso.slice(0, 19).replace('T', ' ')

/** The stylesheet's badge colours: green for what works, amber for what waits, red for what stopped. */
const BADGE: Record<string, string> = {
  active: 'active',
  paused: 'invited',
  disabled: 'expired',
  delivered: 'active',
  queued: 'invited',
  retrying: 'invited',
  failed_permanent: 'expired',
}

function Badge({ status }: { status: string }) {
  return (
    <span class={`badge ${BADGE[status] ?? ''}`} safe>
      {status}
    </span>
  )
}

/** "97.5%" of the attempts that were 2xx, rounded down (never 100% while one failed), or "—". */
function successText(rate: SuccessRate | undefined): string {
  if (!rate?.total) return '—'
  return `${Math.floor((1000 * rate.ok) / rate.total) / 10}%`
}

function Rate({ rate }: { rate: SuccessRate | undefined }) {
  const title = rate?.total
    ? `${rate.ok} of ${rate.total} attempts in the last 24 hours were answered 2xx`
    : 'No attempt in the last 24 hours'
  return (
    <span title={title} safe>
      {successText(rate)}
    </span>
  )
}

function EndpointRow({
  workspaceId,
  hook,
  rate,
}: {
  workspaceId: string
  hook: WebhookModel.Out
  rate: SuccessRate | undefined
}) {
  return (
    <tr id={`webhook-${hook.id}`}>
      <td>
        <a href={`${webhooksPath(workspaceId)}/${hook.id}`} aria-label={`Endpoint ${hook.url}`} safe>
          {hook.url}
        </a>
        {hook.description ? (
          <p class="hint" safe>
            {hook.description}
          </p>
        ) : (
          ''
        )}
      </td>
      <td safe>{hook.events.join(', ')}</td>
      <td>
        <Badge status={hook.status} />
      </td>
      <td class="nowrap">
        <Rate rate={rate} />
      </td>
    </tr>
  )
}

function EndpointTable({
  workspaceId,
  items,
  rates,
}: {
  workspaceId: string
  items: WebhookModel.Out[]
  rates: Map<string, SuccessRate>
}) {
  if (!items.length)
    return (
      <EmptyState title="No webhook endpoints yet">
        <p>An endpoint receives this workspace's events (new users, sign-ins, tenants…) as signed POSTs.</p>
      </EmptyState>
    )
  return (
    <table>
      <thead>
        <tr>
          <th>Endpoint</th>
          <th>Events</th>
          <th>Status</th>
          <th title="Attempts answered 2xx over the last 24 hours">Success (24 h)</th>
        </tr>
      </thead>
      <tbody id="webhook-rows">
        {items.map((hook) => (
          <EndpointRow workspaceId={workspaceId} hook={hook} rate={rates.get(hook.id)} />
        ))}
      </tbody>
    </table>
  )
}

const emptyCreate: FormValues<CreateField> = { url: '', description: '', events: '' }

/** What each event type means, in plain words (SPEC "Outgoing webhook events"). */
const EVENT_DESCRIPTIONS: Record<SubscribableEvent, string> = {
  'user.created': 'A new user completed signup.',
  'user.updated': "A user's email, name or attributes changed.",
  'user.deleted': 'A user was deleted, by an admin or by themselves.',
  'session.started': 'A user signed in.',
  'session.ended': 'A user signed out, or their session expired.',
  'tenant.created': 'A tenant is created in the workspace.',
  'tenant.deleted': 'A tenant is deleted.',
  'plan.changed': 'The workspace changed plan.',
  'subscription.past_due': 'A payment failed; the workspace is in its grace period.',
  'mau.threshold_warning': 'Monthly active users crossed 80%, 95% or 100% of the plan.',
  signups_blocked: 'The spending cap was reached; new signups are blocked.',
}

/**
 * Sent only by billing: the form leaves them out while billing is off (no Stripe), when they can
 * never fire. The API still takes them, so a subscription made ahead of billing keeps working.
 */
const BILLING_EVENTS: ReadonlySet<SubscribableEvent> = new Set([
  'plan.changed',
  'subscription.past_due',
  'mau.threshold_warning',
  'signups_blocked',
])

/** The checkboxes are sent as one `events` field per box ticked; the form keeps them one a line. */
function CreateWebhookForm({
  workspaceId,
  billing,
  values = emptyCreate,
  errors = {},
}: {
  workspaceId: string
  /** Whether billing is on: its events are offered only then. */
  billing: boolean
  values?: FormValues<CreateField>
  errors?: FieldErrors<CreateField>
}) {
  const ticked = new Set(values.events.split('\n'))
  const offered = SUBSCRIBABLE_EVENTS.filter((type) => billing || !BILLING_EVENTS.has(type))
  return (
    <HxForm
      id="webhook-create"
      action={webhooksPath(workspaceId)}
      target="#webhooks"
      swap="outerHTML"
      invalid={Object.keys(errors).length > 0}
    >
      <label for="webhook-url">Endpoint URL</label>
      <input
        id="webhook-url"
        name="url"
        type="text"
        required
        maxlength="2000"
        value={values.url}
        placeholder="https://example.com/webhooks/gatehouse"
      />
      <FieldError id="webhook-url-error" message={errors.url} />
      <label for="webhook-description">Description (optional)</label>
      <input
        id="webhook-description"
        name="description"
        type="text"
        maxlength="500"
        value={values.description}
        placeholder="Billing service"
      />
      <FieldError id="webhook-description-error" message={errors.description} />
      <fieldset id="webhook-events" class="checks">
        <legend class="label">Events to send</legend>
        {offered.map((type) => (
          <div class="check">
            <input
              id={`webhook-event-${type}`}
              name="events"
              type="checkbox"
              value={type}
              checked={ticked.has(type)}
              aria-describedby={`webhook-event-${type}-about`}
            />
            <label for={`webhook-event-${type}`}>
              <code>{type}</code>
            </label>
            <p class="hint" id={`webhook-event-${type}-about`} safe>
              {EVENT_DESCRIPTIONS[type]}
            </p>
          </div>
        ))}
      </fieldset>
      <FieldError id="webhook-events-error" message={errors.events} />
      <p>
        <button class="btn" type="submit">
          Add endpoint
        </button>
      </p>
    </HxForm>
  )
}

/** Shown once, after a creation or a rotation: the secret is stored sealed and never shown again. */
function SecretReveal({ hook, rotated }: { hook: Created; rotated?: boolean }) {
  return (
    <div class="panel" id="webhook-secret" role="status">
      <h2 safe>{rotated ? `New signing secret of ${hook.url}` : `Signing secret of ${hook.url}`}</h2>
      <Alert kind="warn">
        Copy this signing secret now: it will not be shown again.
        {rotated ? ' The previous secret keeps signing beside it for 24 hours.' : ''}
      </Alert>
      <Copyable label="Signing secret" value={hook.secret} />
      <p class="hint">
        Each delivery carries <code>Service-Signature: t=…,v1=…</code>: an HMAC-SHA256, keyed with this
        secret, of the timestamp <code>t</code>, a dot and the raw body.
      </p>
    </div>
  )
}

/** The list page's body: the new secret (once), the endpoints, and the create form. */
export function WebhooksSection({
  workspaceId,
  items,
  rates,
  created,
  billing,
  form,
}: {
  workspaceId: string
  items: WebhookModel.Out[]
  rates: Map<string, SuccessRate>
  created?: Created
  /** Whether billing is on (Stripe configured): the form offers its events only then. */
  billing: boolean
  form?: { values?: FormValues<CreateField>; errors?: FieldErrors<CreateField> }
}) {
  return (
    <div id="webhooks">
      {created ? <SecretReveal hook={created} /> : ''}
      <div class="panel">
        <EndpointTable workspaceId={workspaceId} items={items} rates={rates} />
      </div>
      <div class="panel">
        <h2>Add an endpoint</h2>
        <CreateWebhookForm workspaceId={workspaceId} billing={billing} {...form} />
      </div>
    </div>
  )
}

/** What a member without `workspace:write` sees: endpoints and their URLs are not theirs to read. */
export function WebhooksNotAllowed() {
  return (
    <div class="panel" id="webhooks">
      <Alert kind="warn">
        Webhooks are managed by members who can change this workspace (developers, admins and owners). Ask one
        of them to add or change an endpoint.
      </Alert>
    </div>
  )
}

/** The endpoint's page, with the log's tab kept, so an action redraws the view it was made from. */
const endpointPath = (workspaceId: string, hookId: string) => `${webhooksPath(workspaceId)}/${hookId}`
const withFilter = (path: string, filter: LogFilter) => (filter === 'failed' ? `${path}?status=failed` : path)

function EndpointFacts({ hook, rate }: { hook: WebhookModel.Out; rate: SuccessRate | undefined }) {
  return (
    <dl class="facts">
      <dt>URL</dt>
      <dd>
        <code safe>{hook.url}</code>
      </dd>
      <dt>Id</dt>
      <dd>
        <code safe>{hook.id}</code>
      </dd>
      <dt>Description</dt>
      <dd>{hook.description ? <span safe>{hook.description}</span> : <span class="hint">none</span>}</dd>
      <dt>Events</dt>
      <dd safe>{hook.events.join(', ')}</dd>
      <dt>Status</dt>
      <dd id="webhook-status">
        <Badge status={hook.status} />
        {hook.status === 'paused' ? (
          <p class="hint">
            No delivery succeeded for 24 hours: new events wait, queued, until you reactivate it.
          </p>
        ) : (
          ''
        )}
      </dd>
      <dt>Success (24 h)</dt>
      <dd id="webhook-success">
        <Rate rate={rate} />
      </dd>
      <dt>Created</dt>
      <dd safe>{time(hook.created_at)}</dd>
    </dl>
  )
}

/** One action of the endpoint: an htmx POST whose answer redraws `#webhook`. */
function ActionButton({
  action,
  label,
  confirm,
  danger,
}: {
  action: string
  label: string
  confirm?: string
  danger?: boolean
}) {
  return (
    <button
      type="button"
      class={`btn ${danger ? 'danger' : 'secondary'} small`}
      hx-post={action}
      hx-target="#webhook"
      hx-swap="outerHTML"
      hx-confirm={confirm}
      safe
    >
      {label}
    </button>
  )
}

function EndpointActions({
  workspaceId,
  hook,
  filter,
}: {
  workspaceId: string
  hook: WebhookModel.Out
  filter: LogFilter
}) {
  const path = endpointPath(workspaceId, hook.id)
  const to = (action: string) => withFilter(`${path}/${action}`, filter)
  return (
    <p class="actions" id="webhook-actions">
      <ActionButton action={to('test')} label="Send test" />{' '}
      {hook.status === 'paused' ? (
        <>
          <ActionButton action={to('reactivate')} label="Reactivate" />{' '}
        </>
      ) : (
        ''
      )}
      {hook.enabled ? (
        <ActionButton
          action={to('disable')}
          label="Disable"
          confirm={`Disable ${hook.url}? Events that happen while it is disabled are not sent to it.`}
        />
      ) : (
        <ActionButton action={to('enable')} label="Enable" />
      )}{' '}
      <ActionButton
        action={to('rotate-secret')}
        label="Rotate secret"
        confirm={`Rotate the signing secret of ${hook.url}? The old secret keeps signing beside the new one for 24 hours.`}
      />{' '}
      <button
        type="button"
        class="btn danger small"
        hx-delete={path}
        hx-confirm={`Delete ${hook.url}? Its deliveries and their log go with it.`}
      >
        Delete
      </button>
    </p>
  )
}

function DeliveryRow({
  workspaceId,
  hookId,
  d,
  filter,
}: {
  workspaceId: string
  hookId: string
  d: WebhookModel.Delivery
  filter: LogFilter
}) {
  const redeliver = withFilter(`${endpointPath(workspaceId, hookId)}/deliveries/${d.id}/redeliver`, filter)
  return (
    <tr id={`delivery-${d.id}`}>
      <td>
        <span safe>{d.event_type}</span>
        <br />
        <code class="hint" safe>
          {d.event_id}
        </code>
      </td>
      <td>
        <Badge status={d.status} />
      </td>
      <td class="attempts" safe>
        {String(d.attempts)}
      </td>
      <td class="code" safe>
        {d.last_status_code === null ? '—' : String(d.last_status_code)}
      </td>
      <td>
        {d.last_error ? (
          <span class="error" safe>
            {d.last_error}
          </span>
        ) : (
          ''
        )}
        {d.last_response ? (
          <details>
            <summary>Answer</summary>
            <pre class="secret response" safe>
              {d.last_response}
            </pre>
          </details>
        ) : (
          ''
        )}
      </td>
      <td class="hint">
        <span safe>{`created ${shortTime(d.created_at)}`}</span>
        {d.last_attempt_at ? (
          <>
            <br />
            <span safe>{`last tried ${shortTime(d.last_attempt_at)}`}</span>
          </>
        ) : (
          ''
        )}
        {d.next_attempt_at ? (
          <>
            <br />
            <span safe>{`next try ${shortTime(d.next_attempt_at)}`}</span>
          </>
        ) : (
          ''
        )}
      </td>
      <td class="actions">
        <button
          type="button"
          class="btn secondary small"
          hx-post={redeliver}
          hx-target="#webhook"
          hx-swap="outerHTML"
          aria-label={`Redeliver ${d.event_type} (${d.id})`}
        >
          Redeliver
        </button>
      </td>
    </tr>
  )
}

/** The log's two tabs: plain links, so a tab can be bookmarked and reloaded. */
function LogTabs({ path, filter }: { path: string; filter: LogFilter }) {
  return (
    <nav class="row" aria-label="Deliveries shown">
      <span>
        <a href={path} aria-current={filter === 'all' ? 'page' : undefined}>
          All
        </a>{' '}
        ·{' '}
        <a href={withFilter(path, 'failed')} aria-current={filter === 'failed' ? 'page' : undefined}>
          Failed
        </a>
      </span>
    </nav>
  )
}

function DeliveryLog({
  workspaceId,
  hookId,
  page,
  filter,
  cursor,
}: {
  workspaceId: string
  hookId: string
  page: { items: WebhookModel.Delivery[]; total: number; next_cursor: string | null }
  filter: LogFilter
  cursor?: string
}) {
  const path = endpointPath(workspaceId, hookId)
  const here = withFilter(path, filter)
  const join = here.includes('?') ? '&' : '?'
  const empty =
    filter === 'failed'
      ? 'No delivery failed for good: each was delivered or is still being retried.'
      : 'No deliveries yet. Send a test event to see one here.'
  return (
    <div id="webhook-log">
      <LogTabs path={path} filter={filter} />
      <p class="hint" id="delivery-count" safe>
        {`${page.total} ${page.total === 1 ? 'delivery' : 'deliveries'}${filter === 'failed' ? ' failed for good' : ''}`}
      </p>
      <table>
        <thead>
          <tr>
            <th>Event</th>
            <th>Status</th>
            <th>Attempts</th>
            <th>Code</th>
            <th>Last error and answer</th>
            <th>Times (UTC)</th>
            <th></th>
          </tr>
        </thead>
        <tbody id="delivery-rows">
          {page.items.length ? (
            page.items.map((d) => (
              <DeliveryRow workspaceId={workspaceId} hookId={hookId} d={d} filter={filter} />
            ))
          ) : (
            <tr id="delivery-rows-empty">
              <td colspan="7" class="empty">
                {empty}
              </td>
            </tr>
          )}
        </tbody>
      </table>
      <Pager
        nextId="deliveries-next"
        first={cursor ? here : null}
        next={page.next_cursor ? `${here}${join}cursor=${encodeURIComponent(page.next_cursor)}` : null}
      />
    </div>
  )
}

/** The endpoint page's body, which every action redraws: a note, a new secret (once), facts, actions, log. */
export function EndpointSection({
  workspaceId,
  hook,
  rate,
  log,
  filter,
  cursor,
  done,
  rotated,
}: {
  workspaceId: string
  hook: WebhookModel.Out
  rate: SuccessRate | undefined
  log: Parameters<typeof DeliveryLog>[0]['page']
  filter: LogFilter
  cursor?: string
  done?: string
  rotated?: Created
}) {
  return (
    <div id="webhook">
      {done ? (
        <Alert kind="ok">
          <span id="webhook-done" safe>
            {done}
          </span>
        </Alert>
      ) : (
        ''
      )}
      {rotated ? <SecretReveal hook={rotated} rotated /> : ''}
      <div class="panel">
        <EndpointFacts hook={hook} rate={rate} />
        <EndpointActions workspaceId={workspaceId} hook={hook} filter={filter} />
      </div>
      <div class="panel">
        <h2>Deliveries</h2>
        <DeliveryLog workspaceId={workspaceId} hookId={hook.id} page={log} filter={filter} cursor={cursor} />
      </div>
    </div>
  )
}
