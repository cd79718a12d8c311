import { MessagePage, type PageLink } from '../../shared/views/hosted-layout'
import type { PasswordRule } from '../accounts'
import type { IdentityError } from '../errors'

/** What the hosted pages say where a password form would be when the login policy turns passwords off. */
export const PASSWORDS_OFF =
  'This workspace does not use passwords: you sign in through an external identity provider.'

/** Why a workspace over its monthly users refuses a new account (sign-up, or a first IdP sign-in). */
export const SIGNUPS_BLOCKED =
  'This workspace is not accepting new accounts right now: it has reached its limit of monthly active users. If you already have an account, sign in.'

/** The answer of a password page (reset, forgot) of an instance whose login policy turns passwords off. */
export const PASSWORDS_OFF_ERROR: IdentityError = {
  status: 403,
  title: 'Passwords are not used here',
  message: PASSWORDS_OFF,
}

/** A password being chosen (sign-up, reset, invitation), with the rule the server enforces (the policy's). */
export function NewPasswordField({ label, rule }: { label: string; rule: PasswordRule }) {
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
        minlength={String(rule.minLength)}
        autocomplete="new-password"
        aria-describedby="password-rule"
      />
      <p class="hint" id="password-rule" safe>
        {`At least ${rule.minLength} characters.`}
      </p>
    </>
  )
}

/** The end of a flow that went well (verified, changed, connected, signed out), and where to go on. */
export const DonePage = (p: { title: string; message: string; link?: PageLink }) =>
  MessagePage({ ...p, kind: 'ok' })

/** The email field of the sign-in, sign-up and reset forms (`autocomplete` tells password managers which). */
export function EmailField(p: { autocomplete: 'username' | 'email'; autofocus?: boolean; value?: string }) {
  return (
    <>
      <label for="email">Email</label>
      <input
        id="email"
        name="email"
        type="email"
        required
        autofocus={p.autofocus}
        autocomplete={p.autocomplete}
        value={p.value}
      />
    </>
  )
}

/** One button per external IdP the sign-in page offers ("Continue with GitHub"). */
export function ExternalIdpButtons(p: {
  idps: { id: string; name: string; href: string }[]
  divider: boolean
}) {
  if (!p.idps.length) return ''
  return (
    <>
      <div class="idps">
        {p.idps.map((i) => (
          <a href={i.href} data-idp={i.id}>
            Continue with <span safe>{i.name}</span>
          </a>
        ))}
      </div>
      {p.divider ? <p class="or">or</p> : ''}
    </>
  )
}
