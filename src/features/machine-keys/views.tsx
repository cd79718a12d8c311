import type { FieldErrors, FormValues } from '../../shared/forms'
import { Alert, FieldError, HxForm, RowsTable } from '../../shared/views/components'
import type { MachineKeyModel } from './model'

const keysPath = (workspaceId: string) => `/app/workspaces/${workspaceId}/settings/machine-keys`

type CreateField = 'name' | 'scopes' | 'expires_at'
type Created = MachineKeyModel.Out & { key: Record<string, string> }

const ACCESS: [string, string][] = [
  ['workspace:read', 'Read: list and read everything in the workspace'],
  ['workspace:write', 'Write: read, and create or change apps, users and settings'],
  ['workspace:admin', 'Admin: everything, including members, machine keys and deleting the workspace'],
]

const day = (iso: string | null) => (iso ? iso.slice(0, 10) : '')

function StatusBadge({ k }: { k: MachineKeyModel.Out }) {
  if (k.status === 'rotating')
    return (
      <span class="badge invited" title={`Works until ${k.revokes_at} UTC`}>
        rotating
      </span>
    )
  return <span class={`badge ${k.status}`}>{k.status}</span>
}

function KeyRow({ workspaceId, k, admin }: { workspaceId: string; k: MachineKeyModel.Out; admin: boolean }) {
  const path = `${keysPath(workspaceId)}/${k.id}`
  return (
    <tr id={`key-${k.id}`}>
      <td>
        <span safe>{k.name}</span>
        <br />
        <code class="hint" safe>
          {k.id}
        </code>
      </td>
      <td safe>{k.scopes.join(' ')}</td>
      <td>
        <StatusBadge k={k} />
      </td>
      <td class="nowrap" safe>
        {day(k.created_at)}
      </td>
      <td>{k.last_used_at ? k.last_used_at.slice(0, 16).replace('T', ' ') : 'never'}</td>
      <td>{k.expires_at ? day(k.expires_at) : 'never'}</td>
      <td class="actions">
        {admin && k.status === 'active' ? (
          <button
            type="button"
            class="btn secondary small"
            hx-post={`${path}/rotate`}
            hx-target="#machine-keys"
            hx-swap="outerHTML"
            hx-confirm={`Rotate ${k.name}? You get a new key file now; the old key keeps working for 24 hours.`}
            aria-label={`Rotate ${k.name} (${k.id})`}
          >
            Rotate
          </button>
        ) : (
          ''
        )}
        {admin ? (
          <button
            type="button"
            class="btn danger small"
            hx-delete={path}
            hx-target="closest tr"
            hx-swap="outerHTML swap:200ms"
            hx-confirm={`Revoke ${k.name}? It stops working at once; tokens it issued end within 15 minutes.`}
            aria-label={`Revoke ${k.name} (${k.id})`}
          >
            Revoke
          </button>
        ) : (
          ''
        )}
      </td>
    </tr>
  )
}

function KeyTable({
  workspaceId,
  items,
  admin,
}: {
  workspaceId: string
  items: MachineKeyModel.Out[]
  admin: boolean
}) {
  return (
    <RowsTable
      heads={['Name', 'Scopes', 'Status', 'Created', 'Last used', 'Expires', '']}
      rows="key-rows"
      empty="No machine keys yet. A machine key lets a script, a CI job or an agent call the API of this workspace."
    >
      {items.map((k) => (
        <KeyRow workspaceId={workspaceId} k={k} admin={admin} />
      ))}
    </RowsTable>
  )
}

const emptyCreate: FormValues<CreateField> = { name: '', scopes: 'workspace:read', expires_at: '' }

function CreateKeyForm({
  workspaceId,
  values = emptyCreate,
  errors = {},
}: {
  workspaceId: string
  values?: FormValues<CreateField>
  errors?: FieldErrors<CreateField>
}) {
  const action = keysPath(workspaceId)
  return (
    <HxForm
      id="key-create"
      action={action}
      target="#machine-keys"
      swap="outerHTML"
      invalid={Object.keys(errors).length > 0}
    >
      <label for="key-name">Name</label>
      <input
        id="key-name"
        name="name"
        type="text"
        required
        maxlength="100"
        value={values.name}
        placeholder="ci-deploy"
      />
      <FieldError id="key-name-error" message={errors.name} />
      <label for="key-scopes">Access</label>
      <select id="key-scopes" name="scopes">
        {ACCESS.map(([scope, does]) => (
          <option value={scope} selected={scope === values.scopes} safe>
            {does}
          </option>
        ))}
      </select>
      <FieldError id="key-scopes-error" message={errors.scopes} />
      <label for="key-expires">Valid through (a UTC date; leave empty for a key that never expires)</label>
      <input id="key-expires" name="expires_at" type="date" value={values.expires_at} />
      <FieldError id="key-expires-error" message={errors.expires_at} />
      <p>
        <button class="btn" type="submit">
          Create key
        </button>
      </p>
    </HxForm>
  )
}

/** Shown once: the key file, to copy or download; the private key is not stored anywhere. */
function KeyReveal({ created }: { created: Created }) {
  const file = JSON.stringify(created.key, null, 2)
  const href = `data:application/json;base64,${Buffer.from(file).toString('base64')}`
  return (
    <div class="panel" id="key-reveal" role="status">
      <h2 safe>{`Key file of ${created.name}`}</h2>
      <Alert kind="warn">
        Save this key file now. It holds the private key, which is shown only once and never stored.
      </Alert>
      <pre class="secret" id="key-file" safe>
        {file}
      </pre>
      <p>
        <a class="btn" href={href} download={`${created.id}.json`}>
          Download key file
        </a>{' '}
        {/* public/app.js copies data-copy on click. */}
        <button type="button" class="btn secondary" data-copy={file}>
          Copy
        </button>
      </p>
      <p class="hint">
        Point <code>SERVICE_MACHINE_KEY_PATH</code> at the file; <code>docs/machine-keys.md</code> (in the
        Gatehouse source) shows the token exchange.
      </p>
    </div>
  )
}

/** The page's body: the new key file (once), the table, and for admins the create form. */
export function KeysSection({
  workspaceId,
  items,
  admin,
  created,
  form,
}: {
  workspaceId: string
  items: MachineKeyModel.Out[]
  admin: boolean
  created?: Created
  form?: { values?: FormValues<CreateField>; errors?: FieldErrors<CreateField> }
}) {
  return (
    <div id="machine-keys">
      {created ? <KeyReveal created={created} /> : ''}
      <div class="panel">
        <KeyTable workspaceId={workspaceId} items={items} admin={admin} />
      </div>
      {admin ? (
        <div class="panel">
          <h2>Create a machine key</h2>
          <CreateKeyForm workspaceId={workspaceId} {...form} />
        </div>
      ) : (
        ''
      )}
    </div>
  )
}
