import type { Configuration } from 'oidc-provider'
import { Alert } from '../../shared/views/components'
import { Layout } from '../../shared/views/hosted-layout'
import { setError } from '../errors'
import { DonePage } from './components'
import { render } from './http'

// oidc-provider's code input selects its text on focus with an inline handler, which the identity
// CSP refuses (and reports); the field works the same without it.
const INLINE_FOCUS_HANDLER = ' onfocus="this.select(); this.onfocus = undefined;"'

/**
 * oidc-provider hands over its own `<form>` (CSRF field and the code input); the input gets an id
 * so the label names it, and the button submits the form.
 */
function DeviceInputPage(p: { safeForm: string; error?: string | null }) {
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

function DeviceConfirmPage(p: { safeForm: string; clientName: string; userCode: string }) {
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

type DeviceFlow = NonNullable<NonNullable<Configuration['features']>['deviceFlow']>

/** The pages of the device flow (RFC 8628 §3.3), as oidc-provider's page sources. */
export const devicePages: Pick<
  DeviceFlow,
  'userCodeInputSource' | 'userCodeConfirmSource' | 'successSource'
> = {
  userCodeInputSource: async (ctx, form, _out, err) => {
    // After an error oidc-provider re-renders this form with a CSRF secret kept in the browser's
    // session. A browser that sent no session cookie has no stored session (no `exp`): that form
    // could never be submitted, and oidc-provider would then fail to save the session (a 500).
    // Ask for a fresh start instead, and leave the session be.
    if (err && typeof ctx.oidc.session?.exp !== 'number') {
      Object.assign(ctx.oidc.session ?? {}, { touched: false })
      setError(ctx, {
        status: ctx.status,
        title: 'Page expired',
        message:
          'This form has expired or your browser did not send its cookie. Open the device page again and enter the code shown on your device.',
        link: { href: ctx.oidc.urlFor('code_verification'), label: 'Open the device page again' },
      })
      return
    }
    return render(
      ctx,
      DeviceInputPage({
        safeForm: form,
        error: err
          ? 'userCode' in err || err.name === 'NoCodeError'
            ? 'That code is not valid. Check it and try again.'
            : 'The request could not be completed. Start again on your device.'
          : null,
      }),
    )
  },
  userCodeConfirmSource: (ctx, form, client, _info, userCode) =>
    render(
      ctx,
      DeviceConfirmPage({ safeForm: form, clientName: client.clientName ?? client.clientId, userCode }),
    ),
  successSource: (ctx) =>
    render(
      ctx,
      DonePage({
        title: 'Device connected',
        message: 'You can close this window and return to your device.',
      }),
    ),
}
