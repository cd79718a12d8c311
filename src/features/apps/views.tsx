import { type FieldErrors, type FormValues, formField } from '../../shared/forms'
import {
  Alert,
  AppendedRow,
  Copyable,
  FieldError,
  HxForm,
  RowsTable,
  TextField,
  TrySignInButton,
} from '../../shared/views/components'
import { AppModel } from './model'
import type { appOut } from './service'

type AppView = ReturnType<typeof appOut>

export const appsPath = (workspaceId: string) => `/app/workspaces/${workspaceId}/apps`
export const appPath = (workspaceId: string, appId: string) => `${appsPath(workspaceId)}/${appId}`
type AppFormField = keyof AppModel.Create

const emptyAppForm: FormValues<AppFormField> = {
  name: '',
  app_type: 'web',
  redirect_uris: '',
  post_logout_redirect_uris: '',
  dev_mode: '',
}

const TYPES = [
  ['web', 'Web (server-side, gets a client secret)'],
  ['spa', 'Single-page app (public, PKCE)'],
  ['native', 'Native or mobile (public, PKCE)'],
] as const

export function AppRow({ workspaceId, app }: { workspaceId: string; app: AppView }) {
  return (
    <tr id={`app-${app.id}`}>
      <td>
        <a href={appPath(workspaceId, app.id)} safe>
          {app.name}
        </a>
      </td>
      <td>{app.app_type}</td>
      <td>
        <code safe>{app.client_id}</code>
      </td>
      <td>
        {app.redirect_uris.map((u) => (
          <div>
            <code safe>{u}</code>
          </div>
        ))}
      </td>
      <td class="nowrap">
        <TrySignInButton workspaceId={workspaceId} small />{' '}
        <button
          type="button"
          class="btn danger small"
          hx-delete={`/app/workspaces/${workspaceId}/apps/${app.id}`}
          hx-target="closest tr"
          hx-swap="outerHTML swap:200ms"
          hx-confirm={`Delete ${app.name}? Apps using its client ID stop working at once.`}
          aria-label={`Delete ${app.name}`}
        >
          Delete
        </button>
      </td>
    </tr>
  )
}

export function AppTable({ workspaceId, apps }: { workspaceId: string; apps: AppView[] }) {
  return (
    <RowsTable
      heads={['Name', 'Type', 'Client ID', 'Redirect URIs', '']}
      rows="app-rows"
      empty="No apps yet. Create one to get a client ID for your website, single-page app or mobile app."
    >
      {apps.map((app) => (
        <AppRow workspaceId={workspaceId} app={app} />
      ))}
    </RowsTable>
  )
}

/** An app's name, as the create form and an app's page ask for it. */
export function NameField({ value, error }: { value: string; error?: string }) {
  return (
    <TextField
      id="app-name"
      name="name"
      label="Name"
      value={value}
      error={error}
      required
      maxlength={AppModel.create.properties.name.maxLength}
    />
  )
}

type UriField = 'redirect_uris' | 'post_logout_redirect_uris' | 'dev_mode'

/** The redirect URIs and development mode, as the create form and an app's page ask for them. */
export function UriFields({
  values,
  errors,
}: {
  values: FormValues<UriField>
  errors: FieldErrors<UriField>
}) {
  return (
    <>
      <label for="app-redirects">Redirect URIs</label>
      <textarea
        id="app-redirects"
        name="redirect_uris"
        required
        placeholder="https://app.example.com/callback"
        safe
      >
        {values.redirect_uris}
      </textarea>
      <p class="hint">
        One per line: where users are sent back after signing in. HTTPS, or http://localhost with development
        mode.
      </p>
      <FieldError id="app-redirects-error" message={errors.redirect_uris} />
      <label for="app-logout">Post-logout redirect URIs (optional)</label>
      <textarea id="app-logout" name="post_logout_redirect_uris" safe>
        {values.post_logout_redirect_uris}
      </textarea>
      <FieldError id="app-logout-error" message={errors.post_logout_redirect_uris} />
      <p class="check">
        <input
          id="app-dev"
          name="dev_mode"
          type="checkbox"
          value="true"
          checked={formField.checkbox.read(values.dev_mode)}
        />{' '}
        <label for="app-dev">
          Development mode: also allow http://localhost and http://127.0.0.1 redirect URIs, for trying the app
          on your own computer. Turn it off before going live.
        </label>
      </p>
      <FieldError id="app-dev-error" message={errors.dev_mode} />
    </>
  )
}

/** The create form; re-rendered with inline errors (422) and the values kept. */
export function AppForm({
  workspaceId,
  values = emptyAppForm,
  errors = {},
}: {
  workspaceId: string
  values?: FormValues<AppFormField>
  errors?: FieldErrors<AppFormField>
}) {
  const action = `/app/workspaces/${workspaceId}/apps`
  return (
    <HxForm id="app-form" action={action} target="#app-create" invalid={Object.keys(errors).length > 0}>
      <NameField value={values.name} error={errors.name} />
      <label for="app-type">Type</label>
      <select id="app-type" name="app_type">
        {TYPES.map(([value, label]) => (
          <option value={value} selected={values.app_type === value}>
            {label}
          </option>
        ))}
      </select>
      <FieldError id="app-type-error" message={errors.app_type} />
      <UriFields values={values} errors={errors} />
      <p>
        <button class="btn" type="submit">
          Create app
        </button>
      </p>
    </HxForm>
  )
}

/** Shown once after creation: the credentials, with copy buttons; the secret is never shown again. */
export function CredentialsReveal({
  workspaceId,
  creds,
  row,
}: {
  workspaceId: string
  creds: {
    id: string
    name: string
    client_id: string
    client_secret: string | null
    issuer: string
    discovery_url: string
  }
  row: AppView
}) {
  return (
    <>
      <div class="panel" id="credentials" role="status">
        <h2 safe>{`${creds.name} is ready`}</h2>
        {creds.client_secret ? (
          <Alert kind="warn">
            Copy the client secret now. It is shown only once and cannot be retrieved later.
          </Alert>
        ) : (
          <p class="hint">This is a public client: it has no secret and must use PKCE.</p>
        )}
        <div class="label">Client ID</div>
        <Copyable label="Client ID" value={creds.client_id} />
        {creds.client_secret ? (
          <>
            <div class="label">Client secret</div>
            <Copyable label="Client secret" value={creds.client_secret} />
          </>
        ) : (
          ''
        )}
        <div class="label">Issuer</div>
        <Copyable label="Issuer" value={creds.issuer} />
        <div class="label">Discovery URL</div>
        <Copyable label="Discovery URL" value={creds.discovery_url} />
        <p>
          <a class="btn" href={appPath(workspaceId, creds.id)}>
            Quickstarts and settings
          </a>{' '}
          <a class="btn secondary" href={appsPath(workspaceId)}>
            Done
          </a>
        </p>
      </div>
      {/* The new row joins the table without a reload. */}
      <AppendedRow rows="app-rows">
        <AppRow workspaceId={workspaceId} app={row} />
      </AppendedRow>
    </>
  )
}
