import { type FieldErrors, type FormValues, formField } from '../../shared/forms'
import { Alert, FieldError } from '../../shared/views/components'
import type { LoginPolicyModel } from './model'

type PolicyField = keyof LoginPolicyModel.View

/** The form's values of a stored policy (as a browser would send them: checkboxes only when ticked). */
export const policyValues = (v: LoginPolicyModel.View): FormValues<PolicyField> => ({
  allow_password: v.allow_password ? 'true' : '',
  allow_registration: v.allow_registration ? 'true' : '',
  allow_external_idps: v.allow_external_idps ? 'true' : '',
  require_email_verification: v.require_email_verification ? 'true' : '',
  mfa: v.mfa,
  password_min_length: String(v.password_min_length),
  lockout_threshold: String(v.lockout_threshold),
  lockout_minutes: String(v.lockout_minutes),
  session_lifetime_hours: String(v.session_lifetime_hours),
})

const CHECKBOXES: [PolicyField, string, string][] = [
  ['allow_registration', 'Allow sign-up', 'Anyone can create an account on the sign-in page.'],
  [
    'allow_password',
    'Allow password sign-in',
    'Off: users sign in through external identity providers only.',
  ],
  ['allow_external_idps', 'Allow external identity providers', 'Google, GitHub, Microsoft or OIDC.'],
  [
    'require_email_verification',
    'Require a verified email',
    'Users must confirm their address before they are signed in to an app.',
  ],
]

const NUMBERS: [PolicyField, string, string][] = [
  ['password_min_length', 'Minimum password length', 'Characters, 8 to 128.'],
  ['lockout_threshold', 'Lock an account after', 'Failed attempts, 0 to 100; 0 never locks.'],
  ['lockout_minutes', 'Lock for', 'Minutes, 1 to 1440.'],
  ['session_lifetime_hours', 'Session lifetime', 'Hours, 1 to 8760 (a year).'],
]

const MFA: [LoginPolicyModel.View['mfa'], string][] = [
  ['off', 'Off'],
  ['optional', 'Optional: users may add an authenticator app or a passkey'],
  ['required', 'Required: every user sets one up at their next sign-in'],
]

/** A verified email is required and no mail can go out: nobody new gets through on their own. */
function VerificationWarning({ workspaceId }: { workspaceId: string }) {
  return (
    <div id="verification-warning">
      <Alert kind="warn">
        This workspace cannot send mail, so no verification link reaches a new user: they cannot finish
        signing in. Set up a mail server in{' '}
        <a href={`/app/workspaces/${workspaceId}/settings/smtp`}>Settings → SMTP</a>, turn this off, or have
        the platform administrator copy each user's verification link from the Users page.
      </Alert>
    </div>
  )
}

const id = (field: PolicyField) => `policy-${field.replaceAll('_', '-')}`

/** The full policy form; re-rendered with inline errors (422) or with a confirmation once saved. */
export function LoginPolicyForm({
  workspaceId,
  values,
  errors = {},
  saved = false,
  mailLeaves,
}: {
  workspaceId: string
  values: FormValues<PolicyField>
  errors?: FieldErrors<PolicyField>
  saved?: boolean
  /** Whether the workspace's mail goes anywhere: a required verification without it strands every new user. */
  mailLeaves: boolean
}) {
  const action = `/app/workspaces/${workspaceId}/settings/login-policy`
  const stranded = !mailLeaves && formField.checkbox.read(values.require_email_verification)
  return (
    <form id="login-policy-form" method="post" action={action} hx-post={action} hx-swap="outerHTML">
      {Object.keys(errors).length ? <Alert kind="error">Some fields need attention.</Alert> : ''}
      {saved ? (
        <Alert kind="ok">Login policy saved. The sign-in pages of this workspace use it from now on.</Alert>
      ) : (
        ''
      )}
      {CHECKBOXES.map(([field, label, hint]) => (
        <>
          <p class="check">
            <input
              id={id(field)}
              name={field}
              type="checkbox"
              value="true"
              checked={formField.checkbox.read(values[field])}
            />{' '}
            <label for={id(field)} safe>
              {label}
            </label>
          </p>
          <p class="hint" safe>
            {hint}
          </p>
          <FieldError id={`${id(field)}-error`} message={errors[field]} />
          {field === 'require_email_verification' && stranded ? (
            <VerificationWarning workspaceId={workspaceId} />
          ) : (
            ''
          )}
        </>
      ))}
      <label for={id('mfa')}>Multi-factor authentication</label>
      <select id={id('mfa')} name="mfa">
        {MFA.map(([value, label]) => (
          <option value={value} selected={values.mfa === value} safe>
            {label}
          </option>
        ))}
      </select>
      <FieldError id={`${id('mfa')}-error`} message={errors.mfa} />
      {NUMBERS.map(([field, label, hint]) => (
        <>
          <label for={id(field)} safe>
            {label}
          </label>
          <input
            id={id(field)}
            name={field}
            type="text"
            inputmode="numeric"
            required
            value={values[field]}
            aria-describedby={`${id(field)}-hint`}
          />
          <p class="hint" id={`${id(field)}-hint`} safe>
            {hint}
          </p>
          <FieldError id={`${id(field)}-error`} message={errors[field]} />
        </>
      ))}
      <p>
        <button class="btn" type="submit">
          Save login policy
        </button>
      </p>
    </form>
  )
}
