import type { FieldErrors, FormValues } from '../../shared/forms'
import { Alert, Copyable, CopyButton, HxForm } from '../../shared/views/components'
import type { AppModel } from './model'
import { type Quickstart, type QuickstartApp, quickstartsFor } from './quickstarts'
import type { appOut } from './service'
import { appPath, NameField, UriFields } from './views'

type AppView = ReturnType<typeof appOut>
type AppSettingsField = keyof AppModel.Update

const TYPE_NAMES = {
  web: 'Web app (server-side, has a client secret)',
  spa: 'Single-page app (public client, PKCE)',
  native: 'Native app or CLI (public client, PKCE)',
} as const

/** The settings form's values as the app has them. */
export const settingsOf = (app: AppView): FormValues<AppSettingsField> => ({
  name: app.name,
  app_type: app.app_type,
  redirect_uris: app.redirect_uris.join('\n'),
  post_logout_redirect_uris: app.post_logout_redirect_uris.join('\n'),
  dev_mode: app.dev_mode ? 'true' : '',
})

/** A rotation as its one-time reveal shows it. */
export interface Rotated {
  client_secret: string
  previous_secret_expires_at: string | null
}

/** What the app page's section is drawn with: the app, and what the last action did or refused. */
export interface AppSectionProps {
  workspaceId: string
  app: AppView
  issuer: string
  canWrite: boolean
  form?: { values: FormValues<AppSettingsField>; errors: FieldErrors<AppSettingsField> }
  done?: string
  /** The page's heading is redrawn too (out of band): the name may have changed. */
  renamed?: boolean
  /** A refusal that belongs to no field of the settings form (a grace outside the choices). */
  error?: string
  rotated?: Rotated
}

function SettingsForm({
  workspaceId,
  app,
  canWrite,
  values,
  errors,
  done,
}: {
  workspaceId: string
  app: AppView
  canWrite: boolean
  values: FormValues<AppSettingsField>
  errors: FieldErrors<AppSettingsField>
  done?: string
}) {
  return (
    <HxForm
      id="app-settings"
      action={appPath(workspaceId, app.id)}
      target="#app"
      swap="outerHTML"
      invalid={Object.keys(errors).length > 0}
      done={done}
    >
      <fieldset class="plain" disabled={!canWrite}>
        <NameField value={values.name} error={errors.name} />
        <div class="label">Type</div>
        <p>{TYPE_NAMES[app.app_type]}</p>
        <p class="hint">An app's type cannot change: create another app for another kind of client.</p>
        <UriFields values={values} errors={errors} />
        {canWrite ? (
          <p>
            <button class="btn" type="submit">
              Save changes
            </button>
          </p>
        ) : (
          <p class="hint">You can view this app; changing it needs the developer role or higher.</p>
        )}
      </fieldset>
    </HxForm>
  )
}

/** A file of a snippet, with a button that copies it whole. */
function SnippetFile({ id, name, code }: { id: string; name: string; code: string }) {
  return (
    <>
      <div class="row">
        <span class="label" safe>
          {name}
        </span>
        <CopyButton value={code} />
      </div>
      <pre class="snippet" id={id}>
        <code safe>{code}</code>
      </pre>
    </>
  )
}

/** Shown once, after a rotation: the new secret, what became of the old one, and the .env block with it. */
function SecretReveal({ app, issuer, rotated }: { app: AppView; issuer: string; rotated: Rotated }) {
  const env = quickstartsFor({ ...quickstartApp(app, issuer), clientSecret: rotated.client_secret }).find(
    (q) => q.id === 'env',
  )
  return (
    <div class="panel" id="secret-reveal" role="status">
      <h2>New client secret</h2>
      <Alert kind="warn">
        Copy the new client secret now. It is shown only once and cannot be retrieved later.
      </Alert>
      <Copyable label="Client secret" value={rotated.client_secret} />
      <p id="previous-secret">
        {rotated.previous_secret_expires_at
          ? `The previous secret keeps working until ${rotated.previous_secret_expires_at} (UTC): deploy the new one before then.`
          : 'The previous secret no longer works.'}
      </p>
      {env?.files.map((f) => (
        <SnippetFile id="reveal-env" name={f.name} code={f.code} />
      ))}
    </div>
  )
}

function SecretPanel({ workspaceId, app }: { workspaceId: string; app: AppView }) {
  const action = `${appPath(workspaceId, app.id)}/rotate-secret`
  return (
    <div class="panel">
      <h2>Client secret</h2>
      <p>
        The secret is stored only as a digest and was shown once, when the app was created. Rotate it if it
        leaked or was lost: the new one is shown once.
      </p>
      <form
        id="rotate-secret"
        method="post"
        action={action}
        hx-post={action}
        hx-target="#app"
        hx-swap="outerHTML"
        hx-confirm={`Rotate the client secret of ${app.name}?`}
      >
        <label for="rotate-grace">Keep the old secret working for</label>
        <select id="rotate-grace" name="grace_hours">
          <option value="0">No time: refuse it at once</option>
          <option value="1">1 hour</option>
          <option value="24">24 hours</option>
        </select>
        <p>
          <button class="btn secondary" type="submit">
            Rotate secret
          </button>
        </p>
      </form>
    </div>
  )
}

const quickstartApp = (app: AppView, issuer: string): QuickstartApp => ({
  issuer,
  clientId: app.client_id,
  appType: app.app_type,
  redirectUris: app.redirect_uris,
  postLogoutRedirectUris: app.post_logout_redirect_uris,
})

function Quickstarts({ items }: { items: Quickstart[] }) {
  return (
    <div class="panel" id="quickstarts">
      <h2>Quickstarts</h2>
      <p class="hint">
        Filled in with this app's issuer and client ID.
        {items.some((q) => q.files.some((f) => f.code.includes('OIDC_CLIENT_SECRET')))
          ? ' The client secret is yours to add: it is never shown again after its one-time reveal.'
          : ''}
      </p>
      <nav class="row" aria-label="Quickstarts">
        {items.map((q) => (
          <a href={`#qs-${q.id}`} safe>
            {q.title}
          </a>
        ))}
      </nav>
      {items.map((q) => (
        <section id={`qs-${q.id}`}>
          <h3 safe>{q.title}</h3>
          <p class="hint" safe>
            {q.intro}
          </p>
          {q.files.map((f, i) => (
            <SnippetFile id={`qs-${q.id}-${i}`} name={f.name} code={f.code} />
          ))}
        </section>
      ))}
    </div>
  )
}

function DeletePanel({ workspaceId, app }: { workspaceId: string; app: AppView }) {
  return (
    <div class="panel">
      <h2>Delete this app</h2>
      <p>Sign-ins with its client ID stop at once, and its tokens can no longer be refreshed.</p>
      <button
        type="button"
        class="btn danger"
        hx-post={`${appPath(workspaceId, app.id)}/delete`}
        hx-confirm={`Delete ${app.name}? Apps using its client ID stop working at once.`}
        safe
      >
        {`Delete ${app.name}`}
      </button>
    </div>
  )
}

/** The id of the app page's heading. */
export const APP_HEADING = 'app-heading'

/** The app's page below its heading, which every action redraws (`#app`). */
export function AppSection({
  workspaceId,
  app,
  issuer,
  canWrite,
  form,
  done,
  renamed,
  error,
  rotated,
}: AppSectionProps) {
  return (
    <div id="app">
      {renamed ? (
        <h1 id={APP_HEADING} hx-swap-oob="true" safe>
          {app.name}
        </h1>
      ) : (
        ''
      )}
      {error ? (
        <Alert kind="error">
          <span safe>{error}</span>
        </Alert>
      ) : (
        ''
      )}
      {rotated ? <SecretReveal app={app} issuer={issuer} rotated={rotated} /> : ''}
      <div class="panel">
        <h2>Credentials</h2>
        <div class="label">Client ID</div>
        <Copyable label="Client ID" value={app.client_id} />
        <div class="label">Issuer</div>
        <Copyable label="Issuer" value={issuer} />
        <div class="label">Discovery URL</div>
        <Copyable label="Discovery URL" value={`${issuer}/.well-known/openid-configuration`} />
      </div>
      <div class="panel">
        <h2>Settings</h2>
        <SettingsForm
          workspaceId={workspaceId}
          app={app}
          canWrite={canWrite}
          values={form?.values ?? settingsOf(app)}
          errors={form?.errors ?? {}}
          done={done}
        />
      </div>
      {canWrite && app.app_type === 'web' ? <SecretPanel workspaceId={workspaceId} app={app} /> : ''}
      <Quickstarts items={quickstartsFor(quickstartApp(app, issuer))} />
      {canWrite ? <DeletePanel workspaceId={workspaceId} app={app} /> : ''}
    </div>
  )
}
