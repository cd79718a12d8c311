import { cspHash } from '../../shared/security-headers'
import { Alert } from '../../shared/views/components'
import { Layout } from '../../shared/views/hosted-layout'
import type { TotpEnrolment } from '../mfa/totp'
import { FIELD_MAX } from './forms'

/**
 * Runs a WebAuthn ceremony for a `<form data-webauthn="create|get" data-options="…">`: on submit it
 * asks the browser for the credential, writes the response (base64url, the JSON the server library
 * reads) into the form's `credential` field and posts it. One static script, allowed by its hash in
 * the identity CSP; the options travel in an attribute, never in script text.
 */
const WEBAUTHN_SCRIPT = `
var b64 = function (s) {
  s = s.replace(/-/g, '+').replace(/_/g, '/')
  var bin = atob(s + '==='.slice((s.length + 3) % 4))
  var a = new Uint8Array(bin.length)
  for (var i = 0; i < bin.length; i++) a[i] = bin.charCodeAt(i)
  return a.buffer
}
var enc = function (buf) {
  var bin = ''
  new Uint8Array(buf).forEach(function (c) { bin += String.fromCharCode(c) })
  return btoa(bin).replace(/[+]/g, '-').replace(/[/]/g, '_').replace(/=+$/, '')
}
document.querySelectorAll('form[data-webauthn]').forEach(function (form) {
  var status = form.querySelector('.webauthn-status')
  form.addEventListener('submit', function (e) {
    e.preventDefault()
    var create = form.dataset.webauthn === 'create'
    var o = JSON.parse(form.dataset.options)
    o.challenge = b64(o.challenge)
    if (o.user) o.user.id = b64(o.user.id)
    ;(o.excludeCredentials || []).concat(o.allowCredentials || []).forEach(function (c) { c.id = b64(c.id) })
    var asked = create ? navigator.credentials.create({ publicKey: o }) : navigator.credentials.get({ publicKey: o })
    asked.then(function (c) {
      var r = c.response
      var out = { id: c.id, rawId: enc(c.rawId), type: c.type, clientExtensionResults: c.getClientExtensionResults(), response: { clientDataJSON: enc(r.clientDataJSON) } }
      if (c.authenticatorAttachment) out.authenticatorAttachment = c.authenticatorAttachment
      if (create) {
        out.response.attestationObject = enc(r.attestationObject)
        out.response.transports = r.getTransports ? r.getTransports() : []
      } else {
        out.response.authenticatorData = enc(r.authenticatorData)
        out.response.signature = enc(r.signature)
        if (r.userHandle) out.response.userHandle = enc(r.userHandle)
      }
      form.elements.credential.value = JSON.stringify(out)
      form.submit()
    }, function (err) {
      status.textContent = 'The passkey could not be used (' + err.name + '). Try again.'
    })
  })
})
`
export const WEBAUTHN_SCRIPT_HASH = cspHash(WEBAUTHN_SCRIPT)

/** A button that runs a passkey ceremony and posts its result to `action`. */
export function PasskeyForm(p: { action: string; mode: 'create' | 'get'; options: unknown; label: string }) {
  return (
    <>
      <form method="post" action={p.action} data-webauthn={p.mode} data-options={JSON.stringify(p.options)}>
        <input type="hidden" name="credential" value="" />
        <button type="submit" id="passkey-button" safe>
          {p.label}
        </button>
        <p class="hint webauthn-status" role="status"></p>
      </form>
      <script>{WEBAUTHN_SCRIPT}</script>
    </>
  )
}

/** The authenticator app's QR code and secret, and the field that confirms the first code. */
export function TotpSetup(p: { enrolment: TotpEnrolment; action: string }) {
  const safeQrSvg = p.enrolment.qrSvg
  return (
    <form method="post" action={p.action}>
      <p>Scan this code with an authenticator app, or type the key in it:</p>
      <div class="qr">{safeQrSvg}</div>
      <p>
        <code id="totp-secret" safe>
          {p.enrolment.secret}
        </code>
      </p>
      <label for="code">Code from the app</label>
      <input
        id="code"
        name="code"
        type="text"
        inputmode="numeric"
        autocomplete="one-time-code"
        pattern="[0-9]{6}"
        maxlength={String(FIELD_MAX.totp)}
        required
      />
      <button type="submit">Turn on</button>
    </form>
  )
}

/** The recovery codes, shown once, right after the authenticator app is confirmed. */
export function RecoveryCodesPage(p: { codes: string[]; next: string | Promise<string> }) {
  const safeNext = p.next
  return (
    <Layout title="Recovery codes">
      <h1>Save your recovery codes</h1>
      <Alert kind="ok" message="Two-step verification is on." />
      <p>
        Each code signs you in once if you lose your authenticator. Keep them somewhere safe: they are not
        shown again.
      </p>
      <ul id="recovery-codes">
        {p.codes.map((code) => (
          <li>
            <code safe>{code}</code>
          </li>
        ))}
      </ul>
      {safeNext}
    </Layout>
  )
}

/** The field of a second factor: a code from the app, or a recovery code. */
export function CodeField() {
  return (
    <>
      <label for="code">Authentication code</label>
      <input
        id="code"
        name="code"
        type="text"
        autocomplete="one-time-code"
        autofocus
        required
        maxlength={String(FIELD_MAX.code)}
        spellcheck="false"
      />
      <p class="hint">The 6-digit code from your authenticator app, or one of your recovery codes.</p>
    </>
  )
}
