import { cspHash } from '../../shared/security-headers'
import { Alert, Layout } from './layout'

export interface SignInProps {
  action: string
  signUpUrl: string
  forgotUrl: string
  appName: string
  email?: string
  error?: string | null
  notice?: string | null
}

export function SignInPage(p: SignInProps) {
  return (
    <Layout title="Sign in">
      <h1>Sign in</h1>
      <p class="sub">
        to continue to <strong safe>{p.appName}</strong>
      </p>
      <Alert kind="error" message={p.error} />
      <Alert kind="ok" message={p.notice} />
      <form method="post" action={p.action} autocomplete="on">
        <label for="email">Email</label>
        <input
          id="email"
          name="email"
          type="email"
          required
          autofocus
          autocomplete="username"
          value={p.email ?? ''}
        />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" required autocomplete="current-password" />
        <button type="submit">Sign in</button>
      </form>
      <div class="links">
        <a href={p.signUpUrl}>Create an account</a>
        <a href={p.forgotUrl}>Forgot password?</a>
      </div>
    </Layout>
  )
}

/** A password being chosen (sign-up, reset), with the rule the server enforces. */
function NewPasswordField({ label }: { label: string }) {
  return (
    <>
      <label for="password" safe>
        {label}
      </label>
      <input
        id="password"
        name="password"
        type="password"
        required
        minlength="8"
        autocomplete="new-password"
      />
      <p class="hint">At least 8 characters.</p>
    </>
  )
}

export interface SignUpProps {
  action: string
  signInUrl: string
  appName: string
  values?: { email?: string; name?: string }
  error?: string | null
}

export function SignUpPage(p: SignUpProps) {
  return (
    <Layout title="Create your account">
      <h1>Create your account</h1>
      <p class="sub">
        to continue to <strong safe>{p.appName}</strong>
      </p>
      <Alert kind="error" message={p.error} />
      <form method="post" action={p.action}>
        <label for="name">Name</label>
        <input
          id="name"
          name="name"
          type="text"
          autocomplete="name"
          maxlength="200"
          value={p.values?.name ?? ''}
        />
        <label for="email">Email</label>
        <input
          id="email"
          name="email"
          type="email"
          required
          autocomplete="email"
          value={p.values?.email ?? ''}
        />
        <NewPasswordField label="Password" />
        <button type="submit">Create account</button>
      </form>
      <div class="links">
        <a href={p.signInUrl}>I already have an account</a>
      </div>
    </Layout>
  )
}

export function MessagePage(p: {
  title: string
  message: string
  kind?: 'ok' | 'error'
  link?: { href: string; label: string }
}) {
  return (
    <Layout title={p.title}>
      <h1 safe>{p.title}</h1>
      <Alert kind={p.kind ?? 'ok'} message={p.message} />
      {p.link ? (
        <p>
          <a href={p.link.href} safe>
            {p.link.label}
          </a>
        </p>
      ) : (
        ''
      )}
    </Layout>
  )
}

export function ForgotPasswordPage(p: {
  action: string
  signInUrl?: string
  error?: string | null
  notice?: string | null
}) {
  return (
    <Layout title="Reset your password">
      <h1>Reset your password</h1>
      <p class="sub">We will email you a link to choose a new password.</p>
      <Alert kind="error" message={p.error} />
      <Alert kind="ok" message={p.notice} />
      <form method="post" action={p.action}>
        <label for="email">Email</label>
        <input id="email" name="email" type="email" required autocomplete="email" />
        <button type="submit">Send reset link</button>
      </form>
      {p.signInUrl ? (
        <div class="links">
          <a href={p.signInUrl}>Back to sign in</a>
        </div>
      ) : (
        ''
      )}
    </Layout>
  )
}

export function ResetPasswordPage(p: { action: string; token: string; error?: string | null }) {
  return (
    <Layout title="Choose a new password">
      <h1>Choose a new password</h1>
      <Alert kind="error" message={p.error} />
      <form method="post" action={p.action}>
        <input type="hidden" name="token" value={p.token} />
        <NewPasswordField label="New password" />
        <button type="submit">Save password</button>
      </form>
    </Layout>
  )
}

// oidc-provider's code input selects its text on focus with an inline handler, which the identity
// CSP refuses (and reports); the field works the same without it.
const INLINE_FOCUS_HANDLER = ' onfocus="this.select(); this.onfocus = undefined;"'

/**
 * oidc-provider hands over its own `<form>` (CSRF field and the code input); the input gets an id
 * so the label names it, and the button submits the form.
 */
export function DeviceInputPage(p: { safeForm: string; error?: string | null }) {
  const safeLabelledForm = p.safeForm
    .replace(/<input(\s+)((?:[^>]*\s)?)name="user_code"/, '<input id="user-code"$1$2name="user_code"')
    .replace(INLINE_FOCUS_HANDLER, '')
  return (
    <Layout title="Connect a device">
      <h1>Connect a device</h1>
      <p class="sub">Enter the code shown on your device.</p>
      <Alert kind="error" message={p.error} />
      <label for="user-code">Code</label>
      {safeLabelledForm}
      <button type="submit" form="op.deviceInputForm">
        Continue
      </button>
    </Layout>
  )
}

export function DeviceConfirmPage(p: { safeForm: string; clientName: string; userCode: string }) {
  const { safeForm } = p
  return (
    <Layout title="Confirm the device">
      <h1>Confirm the device</h1>
      <p class="sub">
        <strong safe>{p.clientName}</strong> asks to access your account. Check that this code is shown on
        your device:
      </p>
      <code class="user-code" safe>
        {p.userCode}
      </code>
      {safeForm}
      <button type="submit" form="op.deviceConfirmForm">
        Allow
      </button>
      <button type="submit" form="op.deviceConfirmForm" name="abort" value="yes" class="link">
        Deny
      </button>
    </Layout>
  )
}

/** Confirms an RP-initiated logout without another click; allowed by its hash in the identity CSP. */
const AUTO_LOGOUT_SCRIPT = 'document.getElementById("confirm-logout").click()'
export const AUTO_LOGOUT_SCRIPT_HASH = cspHash(AUTO_LOGOUT_SCRIPT)

export function LogoutPage(p: { safeForm: string; auto: boolean }) {
  const { safeForm } = p
  return (
    <Layout title="Signing out">
      <h1>Signing you out…</h1>
      {safeForm}
      <button type="submit" form="op.logoutForm" name="logout" value="yes" id="confirm-logout">
        Sign out
      </button>
      <button type="submit" form="op.logoutForm" class="link">
        Stay signed in
      </button>
      {/* The RP proved the logout with an id_token_hint: confirm it without another click. */}
      {p.auto ? <script>{AUTO_LOGOUT_SCRIPT}</script> : ''}
    </Layout>
  )
}

export function ErrorPage(p: { title: string; message: string }) {
  return (
    <Layout title={p.title}>
      <h1 safe>{p.title}</h1>
      <Alert kind="error" message={p.message} />
    </Layout>
  )
}
