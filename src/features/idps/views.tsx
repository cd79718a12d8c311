import type { FormState, FormValues } from '../../shared/forms'
import { Alert, CopyField, FieldError, HxForm, RowsTable, TextField } from '../../shared/views/components'
import type { IdpModel } from './model'
import type { IdpType } from './schema'

export const idpsPath = (workspaceId: string) => `/app/workspaces/${workspaceId}/settings/idps`

export type CreateField = keyof IdpModel.Create

/**
 * Each type as the page shows it: its name, the letters of its mark (drawn by the stylesheet, no
 * image fetched from anywhere), and who registers its redirect URI, and where.
 */
const TYPES: Record<IdpType, { label: string; mark: string; at: string; register: string }> = {
  google: {
    label: 'Google',
    at: 'Google',
    mark: 'G',
    register:
      'In the Google Cloud console, open APIs & Services → Credentials → your OAuth client and add it under “Authorized redirect URIs”.',
  },
  github: {
    label: 'GitHub',
    at: 'GitHub',
    mark: 'GH',
    register:
      'On GitHub, open Settings → Developer settings → OAuth Apps → your app and set it as the “Authorization callback URL”.',
  },
  microsoft: {
    label: 'Microsoft',
    at: 'Microsoft',
    mark: 'MS',
    register:
      'In the Microsoft Entra admin center, open App registrations → your app → Authentication and add it as a Web redirect URI.',
  },
  oidc: {
    label: 'OpenID Connect',
    at: 'your provider',
    mark: 'ID',
    register: "In your provider's settings for this client, add it as an allowed redirect (callback) URI.",
  },
}
/** In the order of the provider select. */
const TYPE_ORDER = Object.keys(TYPES) as IdpType[]

function TypeMark({ type }: { type: IdpType }) {
  return (
    <span class={`idp-mark ${type}`} aria-hidden="true" safe>
      {TYPES[type].mark}
    </span>
  )
}

function IdpRow({
  workspaceId,
  idp,
  canWrite,
}: {
  workspaceId: string
  idp: IdpModel.Out
  canWrite: boolean
}) {
  return (
    <tr id={`idp-${idp.id}`}>
      <td>
        <TypeMark type={idp.type} />
        <span class="idp-name" safe>
          {idp.name}
        </span>
        <p class="hint" safe>
          {TYPES[idp.type].label}
        </p>
      </td>
      <td>
        <code class="idp-client-id" safe>
          {idp.client_id}
        </code>
        {idp.issuer ? (
          <p class="hint idp-issuer">
            Issuer <code safe>{idp.issuer}</code>
          </p>
        ) : (
          ''
        )}
      </td>
      <td class="idp-redirect">
        <CopyField
          id={`idp-${idp.id}-redirect`}
          label={`Redirect URI of ${idp.name}`}
          value={idp.redirect_uri}
        />
      </td>
      <td class="actions">
        {canWrite ? (
          <button
            type="button"
            class="btn danger small"
            hx-delete={`${idpsPath(workspaceId)}/${idp.id}`}
            hx-target="#idp-list"
            hx-swap="outerHTML"
            hx-confirm={`Delete ${idp.name}? It leaves this workspace's sign-in page at once.`}
            aria-label={`Delete ${idp.name} (${idp.id})`}
          >
            Delete
          </button>
        ) : (
          ''
        )}
      </td>
    </tr>
  )
}

/** Shown once an IdP is added: the redirect URI to register at the provider, and where. */
function IdpCreated({ idp }: { idp: IdpModel.Out }) {
  return (
    <div class="panel" id="idp-created" role="status">
      <h2 safe>{`${idp.name} is added`}</h2>
      <p safe>
        {`Register this redirect URI at ${TYPES[idp.type].at}: sign-in through it fails until the provider knows it.`}
      </p>
      <CopyField id="idp-created-redirect" label={`Redirect URI of ${idp.name}`} value={idp.redirect_uri} />
      <p class="hint" safe>
        {TYPES[idp.type].register}
      </p>
    </div>
  )
}

/** The list, and the IdP just added: what a delete redraws (`#idp-list`), leaving the form as typed. */
export function IdpList({
  workspaceId,
  items,
  canWrite,
  created,
}: {
  workspaceId: string
  items: IdpModel.Out[]
  canWrite: boolean
  created?: IdpModel.Out
}) {
  return (
    <div id="idp-list">
      {created ? <IdpCreated idp={created} /> : ''}
      <div class="panel">
        <RowsTable
          heads={['Provider', 'Client ID', 'Redirect URI', '']}
          rows="idp-rows"
          empty={
            items.length
              ? null
              : 'No identity providers yet. Add Google, GitHub, Microsoft or any OpenID Connect provider to let users sign in with it.'
          }
        >
          {items.map((idp) => (
            <IdpRow workspaceId={workspaceId} idp={idp} canWrite={canWrite} />
          ))}
        </RowsTable>
      </div>
    </div>
  )
}

const emptyCreate: FormValues<CreateField> = {
  type: 'google',
  name: '',
  client_id: '',
  client_secret: '',
  issuer: '',
  scopes: '',
}

/**
 * The create form. The issuer is asked of an `oidc` IdP alone: public/app.js shows its fieldset for
 * that choice and disables it otherwise, so a hidden issuer is never sent. The secret is never
 * written back into the page, not even after a refusal.
 */
function CreateIdpForm({
  workspaceId,
  values = emptyCreate,
  errors = {},
}: { workspaceId: string } & FormState<CreateField>) {
  const oidc = values.type === 'oidc'
  return (
    <HxForm
      id="idp-create"
      action={idpsPath(workspaceId)}
      target="#idps"
      swap="outerHTML"
      invalid={Object.keys(errors).length > 0}
    >
      <label for="idp-type">Provider</label>
      <select id="idp-type" name="type">
        {TYPE_ORDER.map((type) => (
          <option value={type} selected={type === values.type} safe>
            {TYPES[type].label}
          </option>
        ))}
      </select>
      <FieldError id="idp-type-error" message={errors.type} />
      <fieldset
        class="plain"
        id="idp-issuer-field"
        data-shown-for="idp-type=oidc"
        hidden={!oidc}
        disabled={!oidc}
      >
        <TextField
          id="idp-issuer"
          name="issuer"
          label="Issuer URL"
          value={values.issuer}
          error={errors.issuer}
          hint="The provider's issuer, as its discovery document states it."
          maxlength={2000}
          placeholder="https://login.example.com"
        />
      </fieldset>
      <TextField
        id="idp-name"
        name="name"
        label="Name on the sign-in button (optional)"
        value={values.name}
        error={errors.name}
        hint="Leave it empty for the provider's own name."
        maxlength={100}
        placeholder="Acme SSO"
      />
      <TextField
        id="idp-client-id"
        name="client_id"
        label="Client ID"
        value={values.client_id}
        error={errors.client_id}
        required
        maxlength={500}
        autocomplete="off"
      />
      <TextField
        id="idp-client-secret"
        name="client_secret"
        type="password"
        label="Client secret"
        error={errors.client_secret}
        hint="Stored encrypted, and never shown again."
        required
        maxlength={2000}
        autocomplete="new-password"
      />
      <TextField
        id="idp-scopes"
        name="scopes"
        label="Scopes (optional)"
        value={values.scopes}
        error={errors.scopes}
        hint="Separated by spaces. Leave it empty for what the provider needs to tell who signs in."
        placeholder="openid email profile"
      />
      <p>
        <button class="btn" type="submit">
          Add identity provider
        </button>
      </p>
    </HxForm>
  )
}

/** The page's body: the list, and the create form for members who may change the workspace. */
export function IdpsSection({
  workspaceId,
  items,
  canWrite,
  created,
  form,
  redirectUri,
}: {
  workspaceId: string
  items: IdpModel.Out[]
  canWrite: boolean
  created?: IdpModel.Out
  form?: FormState<CreateField>
  /** The workspace's one redirect URI: registered at the provider before the IdP is added here. */
  redirectUri: string
}) {
  return (
    <div id="idps">
      <IdpList workspaceId={workspaceId} items={items} canWrite={canWrite} created={created} />
      {canWrite ? (
        <div class="panel">
          <h2>Add an identity provider</h2>
          <p class="hint">
            First create an OAuth client at the provider, with this redirect URI; then enter its client ID and
            secret here.
          </p>
          <CopyField id="idp-redirect-uri" label="Redirect URI to register" value={redirectUri} />
          <CreateIdpForm workspaceId={workspaceId} {...form} />
        </div>
      ) : (
        <Alert kind="warn">
          Identity providers are added and removed by members who can change this workspace (developers,
          admins and owners).
        </Alert>
      )}
    </div>
  )
}
