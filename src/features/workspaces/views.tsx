import { Alert, Copyable, EmptyState, FieldError } from '../../shared/views/components'
import { WorkspaceModel } from './model'
import type { Workspace } from './service'

const LABELS: Record<Workspace['state'], string> = {
  provisioning: 'Provisioning',
  provisioning_failed: 'Provisioning failed',
  active: 'Active',
  deleting: 'Deleting',
}

function StateBadge({ state }: { state: Workspace['state'] }) {
  const busy = state === 'provisioning' || state === 'deleting'
  return (
    <span class={`badge ${state}`}>
      {busy ? <span class="spinner" aria-hidden="true"></span> : ''}
      <span safe>{LABELS[state]}</span>
    </span>
  )
}

/**
 * The status fragment: it polls itself every 3 s only while provisioning (SPEC), so the page
 * turns active without a reload and polling stops there.
 */
export function StatusFragment({ w }: { w: Workspace }) {
  const polling = w.state === 'provisioning'
  return (
    <div
      id="ws-status"
      hx-get={polling ? `/app/partials/workspaces/${w.id}/status` : undefined}
      hx-trigger={polling ? 'every 3s' : undefined}
      hx-swap="outerHTML"
      aria-live="polite"
    >
      <StateBadge state={w.state} />
      {w.state === 'provisioning' ? (
        <p class="hint">Setting up the identity instance. This takes a few seconds.</p>
      ) : (
        ''
      )}
      {w.state === 'active' ? (
        <p class="hint">
          The identity instance is ready. <a href={`/app/workspaces/${w.id}/apps`}>Create an app</a> to sign
          users in.
        </p>
      ) : (
        ''
      )}
      {w.state === 'provisioning_failed' ? (
        <>
          <Alert kind="error">{Bun.escapeHTML(w.provisioningError ?? 'Provisioning failed.')}</Alert>
          <button
            type="button"
            class="btn"
            hx-post={`/app/workspaces/${w.id}/retry-provisioning`}
            hx-target="#ws-status"
            hx-swap="outerHTML"
          >
            Retry provisioning
          </button>
        </>
      ) : (
        ''
      )}
    </div>
  )
}

export function WorkspaceCards({ items }: { items: Workspace[] }) {
  if (items.length === 0) {
    return (
      <EmptyState title="No workspaces yet">
        <p>A workspace gets its own identity instance, apps and users.</p>
        <a class="btn" href="/app/workspaces/new">
          Create your first workspace
        </a>
      </EmptyState>
    )
  }
  return (
    <div class="grid">
      {items.map((w) => (
        <a class="card" href={`/app/workspaces/${w.id}`}>
          <div class="row">
            <span class="name" safe>
              {w.name}
            </span>
            <StateBadge state={w.state} />
          </div>
          <p class="hint" safe>
            {w.id}
          </p>
        </a>
      ))}
    </div>
  )
}

export function NewWorkspaceForm({ name = '', error }: { name?: string; error?: string }) {
  return (
    <form
      id="new-workspace"
      class="panel"
      method="post"
      action="/app/workspaces"
      hx-post="/app/workspaces"
      hx-swap="outerHTML"
    >
      <label for="ws-name">Workspace name</label>
      <input
        id="ws-name"
        name="name"
        type="text"
        value={name}
        maxlength={String(WorkspaceModel.create.properties.name.maxLength)}
        required
        autofocus
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={error ? 'ws-name-error' : 'ws-name-hint'}
      />
      <p class="hint" id="ws-name-hint">
        Usually your company or product, e.g. “Acme”. You can rename it later.
      </p>
      <FieldError id="ws-name-error" message={error} />
      <p>
        <button class="btn" type="submit">
          Create workspace
        </button>
      </p>
    </form>
  )
}

export function WorkspaceFacts({ w, issuer }: { w: Workspace; issuer: string }) {
  return (
    <dl class="facts">
      <dt>Workspace ID</dt>
      <dd>
        <code safe>{w.id}</code>
      </dd>
      <dt>Plan</dt>
      <dd>{w.plan}</dd>
      <dt>Issuer</dt>
      <dd>
        <Copyable label="Issuer URL" value={issuer} />
      </dd>
      <dt>Discovery</dt>
      <dd>
        <Copyable label="Discovery URL" value={`${issuer}/.well-known/openid-configuration`} />
      </dd>
    </dl>
  )
}

/**
 * The danger zone's form: deleting takes typing the workspace's name (SPEC: "delete the workspace
 * (with confirmation)"), as the API's `confirm` does. Redrawn with the error when the name is wrong.
 */
export function DeleteWorkspaceForm({
  w,
  csrf,
  typed = '',
  error,
}: {
  w: Workspace
  csrf: string
  typed?: string
  error?: string
}) {
  const action = `/app/workspaces/${w.id}/delete`
  return (
    <form id="delete-workspace" method="post" action={action} hx-post={action} hx-swap="outerHTML">
      <p class="hint">
        Deleting stops its identity instance at once: every app and user of it stops signing in. Its data,
        audit log included, is then removed for good.
      </p>
      <input type="hidden" name="_csrf" value={csrf} />
      <label for="ws-delete-confirm">
        Type <strong safe>{w.name}</strong> to confirm
      </label>
      <input
        id="ws-delete-confirm"
        name="confirm"
        type="text"
        value={typed}
        autocomplete="off"
        spellcheck="false"
        maxlength={String(WorkspaceModel.remove.properties.confirm.maxLength)}
        required
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={error ? 'ws-delete-confirm-error' : undefined}
      />
      <FieldError id="ws-delete-confirm-error" message={error} />
      <p>
        <button class="btn danger" type="submit">
          Delete workspace
        </button>
      </p>
    </form>
  )
}

/** One step of getting started: done or not, and the page that does it. */
export interface StartStep {
  label: string
  href: string
  done: boolean
}

/** The overview's getting-started checklist; each step ticks itself from the workspace's state. */
export function GettingStarted({ steps }: { steps: StartStep[] }) {
  const left = steps.filter((s) => !s.done).length
  return (
    <div class="panel" id="getting-started">
      <h2>Getting started</h2>
      <p class="hint" safe>
        {left === 0 ? 'All done.' : `${steps.length - left} of ${steps.length} done.`}
      </p>
      <ul class="checklist">
        {steps.map((s) => (
          <li class={s.done ? 'done' : undefined}>
            <span class="tick" aria-hidden="true">
              {s.done ? '✓' : '○'}
            </span>
            <a href={s.href} safe>
              {s.label}
            </a>
            {s.done ? (
              <span class="visually-hidden"> (done)</span>
            ) : (
              <span class="visually-hidden"> (to do)</span>
            )}
          </li>
        ))}
      </ul>
    </div>
  )
}
