import type { FormState, FormValues } from '../../shared/forms'
import { Alert, FieldError, HxForm, TextField } from '../../shared/views/components'
import type { MailRoute } from '../mail/service'
import type { SmtpModel } from './model'
import type { SmtpHealth } from './service'

const smtpPath = (workspaceId: string) => `/app/workspaces/${workspaceId}/settings/smtp`

type SmtpField = keyof SmtpModel.Update

const SECURITY: [SmtpModel.Update['security'] & string, string][] = [
  ['starttls', 'STARTTLS (usually port 587)'],
  ['tls', 'TLS from the start (usually port 465)'],
  ['none', 'None: unencrypted (only inside a trusted network)'],
]

/** The form's values of the settings in effect (the platform's: an empty form). */
const smtpValues = (v: SmtpModel.View): FormValues<SmtpField> => ({
  host: v.host ?? '',
  port: v.port === null ? '587' : String(v.port),
  username: v.username ?? '',
  password: '',
  security: v.security ?? 'starttls',
  from_address: v.provider === 'custom' ? v.from_address : '',
  from_name: v.provider === 'custom' ? (v.from_name ?? '') : '',
})

/** Where the platform default sends, in truth: its server, the dev outbox, or nowhere. */
function PlatformDefault({ via, sender }: { via: MailRoute['via']; sender: string }) {
  if (via === 'outbox')
    return (
      <p>
        No mail server: the platform has none (<code>SMTP_URL</code> is unset), so this workspace's mail is
        kept in the development outbox, which only the platform administrator reads. Set up this workspace's
        server below to send it.
      </p>
    )
  if (via === 'none')
    return (
      <p>
        <strong>No mail server: this workspace's mail is not sent.</strong> The platform has none (
        <code>SMTP_URL</code> is unset) and its development outbox is off. Set up this workspace's server
        below.
      </p>
    )
  return (
    <p>
      The platform's mail server, sending as <code safe>{sender}</code>.
    </p>
  )
}

/** Which server the workspace's mail goes through now, and how its last deliveries went. */
function InEffect({
  view,
  health,
  via,
}: {
  view: SmtpModel.View
  health: SmtpHealth | null
  via: MailRoute['via']
}) {
  const sender = view.from_name ? `${view.from_name} <${view.from_address}>` : view.from_address
  const failing = health?.lastErrorAt && (!health.lastSuccessAt || health.lastErrorAt > health.lastSuccessAt)
  return (
    <div class="panel" id="smtp-in-effect">
      <h2>In effect</h2>
      {view.provider === 'platform' ? (
        <PlatformDefault via={via} sender={sender} />
      ) : (
        <p>
          This workspace's server <code safe>{`${view.host}:${view.port}`}</code>, sending as{' '}
          <code safe>{sender}</code>.
        </p>
      )}
      {failing ? (
        <div id="smtp-last-error">
          <Alert kind="error">
            <span safe>{`Delivery failed at ${health.lastErrorAt}: ${health.lastError ?? ''}`}</span> Failed
            mails are retried; fix the settings below or go back to the platform's server.
          </Alert>
        </div>
      ) : (
        ''
      )}
      {health?.lastSuccessAt ? (
        <p class="hint" id="smtp-last-success" safe>
          {`Last mail accepted at ${health.lastSuccessAt}.`}
        </p>
      ) : (
        ''
      )}
    </div>
  )
}

function SmtpForm({
  workspaceId,
  hasPassword,
  values,
  errors = {},
  saved,
}: { workspaceId: string; hasPassword: boolean; saved: boolean; values: FormValues<SmtpField> } & Pick<
  FormState<SmtpField>,
  'errors'
>) {
  return (
    <HxForm
      id="smtp-form"
      action={smtpPath(workspaceId)}
      target="#smtp"
      swap="outerHTML"
      invalid={Object.keys(errors).length > 0}
      done={saved ? "Saved. This workspace's mail goes through this server from now on." : undefined}
    >
      <TextField
        id="smtp-host"
        name="host"
        label="Host"
        value={values.host}
        error={errors.host}
        required
        maxlength={253}
        placeholder="smtp.example.com"
      />
      <TextField id="smtp-port" name="port" label="Port" value={values.port} error={errors.port} required />
      <label for="smtp-security">Security</label>
      <select id="smtp-security" name="security">
        {SECURITY.map(([value, label]) => (
          <option value={value} selected={values.security === value} safe>
            {label}
          </option>
        ))}
      </select>
      <FieldError id="smtp-security-error" message={errors.security} />
      <TextField
        id="smtp-username"
        name="username"
        label="Username (optional)"
        value={values.username}
        error={errors.username}
        maxlength={320}
        autocomplete="off"
      />
      <TextField
        id="smtp-password"
        name="password"
        type="password"
        label="Password (optional)"
        error={errors.password}
        hint={
          hasPassword
            ? 'Stored encrypted and never shown. Leave it empty to keep the current one (same host and username).'
            : 'Stored encrypted and never shown.'
        }
        maxlength={1000}
        autocomplete="new-password"
      />
      <TextField
        id="smtp-from-address"
        name="from_address"
        label="Sender address"
        value={values.from_address}
        error={errors.from_address}
        required
        maxlength={320}
        placeholder="no-reply@example.com"
      />
      <TextField
        id="smtp-from-name"
        name="from_name"
        label="Sender name (optional)"
        value={values.from_name}
        error={errors.from_name}
        maxlength={200}
        placeholder="Acme"
      />
      <p>
        <button class="btn" type="submit">
          Save SMTP settings
        </button>
      </p>
    </HxForm>
  )
}

/** The answer of a test mail: the server's reply, or what went wrong. */
function SmtpTestResult({ result }: { result: SmtpModel.Tested }) {
  return result.ok ? (
    <Alert kind="ok">
      <span safe>{`Sent. The server answered: ${result.response ?? ''}`}</span>
    </Alert>
  ) : (
    <Alert kind="error">
      <span safe>{`Not sent. ${result.error?.message ?? ''}`}</span>
    </Alert>
  )
}

/** Sends a test mail through the server in effect; the answer replaces `#smtp-test-result`. */
export function SmtpTestForm({
  workspaceId,
  to = '',
  error,
  result,
}: {
  workspaceId: string
  to?: string
  error?: string
  result?: SmtpModel.Tested
}) {
  const action = `${smtpPath(workspaceId)}/test`
  return (
    <form id="smtp-test" method="post" action={action} hx-post={action} hx-swap="outerHTML">
      <h2>Send a test mail</h2>
      <TextField
        id="smtp-test-to"
        name="to"
        label="To"
        value={to}
        error={error}
        hint="Through the platform's mail server, only to your own verified address; through this workspace's own server, to any address."
        required
        maxlength={320}
        placeholder="you@example.com"
      />
      <p>
        <button class="btn secondary" type="submit">
          Send test mail
        </button>
      </p>
      <div id="smtp-test-result" role="status">
        {result ? <SmtpTestResult result={result} /> : ''}
      </div>
    </form>
  )
}

/** The page's body: what is in effect, and for admins the form, the test and the way back. */
export function SmtpSection({
  workspaceId,
  view,
  health,
  canAdmin,
  form,
  saved = false,
  reverted = false,
  via,
}: {
  workspaceId: string
  view: SmtpModel.View
  health: SmtpHealth | null
  /** How the workspace's mail leaves now (routeMail). */
  via: MailRoute['via']
  canAdmin: boolean
  form?: FormState<SmtpField>
  saved?: boolean
  reverted?: boolean
}) {
  return (
    <div id="smtp">
      {reverted ? (
        <Alert kind="ok">
          Back to the platform's mail server. This workspace's own server settings are deleted.
        </Alert>
      ) : (
        ''
      )}
      <InEffect view={view} health={health} via={via} />
      {canAdmin ? (
        <>
          <div class="panel">
            <h2>This workspace's mail server</h2>
            <SmtpForm
              workspaceId={workspaceId}
              hasPassword={view.has_password}
              values={form?.values ?? smtpValues(view)}
              errors={form?.errors}
              saved={saved}
            />
          </div>
          <div class="panel">
            <SmtpTestForm workspaceId={workspaceId} />
          </div>
          {view.provider === 'custom' ? (
            <div class="panel">
              <h2>Use the platform's server again</h2>
              <form
                id="smtp-revert"
                method="post"
                action={`${smtpPath(workspaceId)}/revert`}
                hx-post={`${smtpPath(workspaceId)}/revert`}
                hx-target="#smtp"
                hx-swap="outerHTML"
                hx-confirm="Go back to the platform's mail server? This workspace's server settings are deleted."
              >
                <button class="btn danger" type="submit">
                  Revert to the platform's server
                </button>
              </form>
            </div>
          ) : (
            ''
          )}
        </>
      ) : (
        <Alert kind="warn">
          The mail server is chosen by the workspace's admins and owners: it receives every sign-in and reset
          link.
        </Alert>
      )}
    </div>
  )
}
