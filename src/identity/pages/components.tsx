import { MessagePage, type PageLink } from '../../shared/views/hosted-layout'
import type { PasswordRule } from '../accounts'
import type { IdentityError } from '../errors'
import { FIELD_MAX } from './forms'

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
        maxlength={String(FIELD_MAX.password)}
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

/** An input with its label, its id its name (a page has one field of each name). */
function LabelledInput({ label, ...input }: { label: string; name: string } & JSX.HtmlInputTag) {
  return (
    <>
      <label for={input.name} safe>
        {label}
      </label>
      <input id={input.name} {...input} />
    </>
  )
}

/** The email field of the sign-in, sign-up and reset forms (`autocomplete` tells password managers which). */
export const EmailField = (p: {
  autocomplete: 'username' | 'email'
  autofocus?: boolean
  value?: string
}) => (
  <LabelledInput
    label="Email"
    name="email"
    type="email"
    required
    maxlength={String(FIELD_MAX.email)}
    {...p}
  />
)

/** The password of an existing account: the sign-in's, and the proof of an account before a link. */
export const PasswordField = (p: { autofocus?: boolean }) => (
  <LabelledInput
    label="Password"
    name="password"
    type="password"
    required
    maxlength={String(FIELD_MAX.password)}
    autofocus={p.autofocus}
    autocomplete="current-password"
  />
)

/** The name of a new account (sign-up, invitation), which may be left empty. */
export const NameField = (p: { value: string }) => (
  <LabelledInput
    label="Name"
    name="name"
    type="text"
    autocomplete="name"
    maxlength={String(FIELD_MAX.name)}
    value={p.value}
  />
)

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
