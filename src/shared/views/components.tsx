import type { PropsWithChildren } from '@kitajs/html'

export function Alert({ kind, children }: PropsWithChildren<{ kind: 'error' | 'ok' | 'warn' }>) {
  return (
    <div class={`alert ${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </div>
  )
}

export function FieldError({ id, message }: { id: string; message?: string }) {
  if (!message) return ''
  return (
    <p class="field-error" id={id} safe>
      {message}
    </p>
  )
}

/** A value with a button that copies it (credentials, issuer URLs). */
export function Copyable({ label, value }: { label: string; value: string }) {
  return (
    <div class="secret">
      <code title={label} safe>
        {value}
      </code>
      {/* public/app.js copies data-copy on click. */}
      <button type="button" class="btn secondary small" data-copy={value}>
        Copy
      </button>
    </div>
  )
}

export function EmptyState({ title, children }: PropsWithChildren<{ title: string }>) {
  return (
    <div class="empty">
      <p>
        <strong safe>{title}</strong>
      </p>
      {children}
    </div>
  )
}

/** The breadcrumb above a page inside a workspace (every feature's pages): its name, linking to its overview. */
export function WorkspaceCrumb({ w }: { w: { id: string; name: string } }) {
  return (
    <p class="hint">
      <a href={`/app/workspaces/${w.id}`} safe>
        {w.name}
      </a>{' '}
      /
    </p>
  )
}
