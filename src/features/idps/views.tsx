import { type FormState, type FormValues, formField } from '../../shared/forms'
import { Alert, CopyField, FieldError, HxForm, RowsTable, TextField } from '../../shared/views/components'
import type { IdpModel } from './model'
import type { IdpType } from './schema'

const idpsPath = (workspaceId: string) => `/app/workspaces/${workspaceId}/settings/idps`

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
  const trusted = [
    idp.trust_email ? 'email addresses' : '',
    idp.trust_mfa ? 'two-step verification' : '',
  ].filter(Boolean)
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
        {trusted.length ? (
          <p class="hint idp-trust" safe>
            {`Trusted: ${trusted.join(', ')}`}
          </p>
        ) : (
          ''
        )}
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
          empty="No identity providers yet. Add Google, GitHub, Microsoft or any OpenID Connect provider to let users sign in with it."
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
  trust_email: '',
  trust_mfa: '',
}

/** The trust an admin may give an IdP (DESIGN "IdPs"), and what it risks, in plain words. */
const TRUST: [field: 'trust_email' | 'trust_mfa', label: string, risk: string][] = [
  [
    'trust_email',
    'Trust its verified email addresses',
    'Someone signing in with this provider for the first time goes straight into an existing account with the same address. Off, they must first sign in to that account with its own password (and second step) to connect it. Turn this on only for a provider you control: whoever runs it can sign in as any user of this workspace.',
  ],
  [
    'trust_mfa',
    'Trust its two-step verification',
    "When the provider says it asked for a second step, this workspace's own two-step verification is skipped. Off, users complete this workspace's second step after signing in with the provider.",
  ],
]

/**
 * The create form. The issuer is asked of an `oidc` IdP alone: public/app.js shows its fieldset for
 * that choice and disables it otherwise, so a hidden issuer is never sent. The secret is never
 * written back into the page, not even after a refusal.
 */
function CreateIdpForm({
  workspaceId,
  canTrust,
  values = emptyCreate,
  errors = {},
}: { workspaceId: string; canTrust: boolean } & FormState<CreateField>) {
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
      {canTrust
        ? TRUST.map(([field, label, risk]) => (
            <>
              <p class="check">
                <input
                  id={`idp-${field}`}
                  name={field}
                  type="checkbox"
                  value="true"
                  checked={formField.checkbox.read(values[field])}
                />{' '}
                <label for={`idp-${field}`} safe>
                  {label}
                </label>
              </p>
              <p class="hint" safe>
                {risk}
              </p>
              <FieldError id={`idp-${field}-error`} message={errors[field]} />
            </>
          ))
        : ''}
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
  canTrust,
  created,
  form,
  redirectUri,
}: {
  workspaceId: string
  items: IdpModel.Out[]
  canWrite: boolean
  /** Admins may trust an IdP's addresses and second factors: the form's checkboxes are theirs alone. */
  canTrust: boolean
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
          <CreateIdpForm workspaceId={workspaceId} canTrust={canTrust} {...form} />
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
