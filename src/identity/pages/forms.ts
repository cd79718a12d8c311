import { type Static, t } from 'elysia'

// The forms the hosted pages post, as their routes declare them (routes.ts): a form that is not one
// of these (a field missing, too long, sent twice) is the one error mapping's 422 page, and never
// reaches a flow. A page's field has the same limit (its `maxlength`), so a browser never sends
// one: what a flow checks itself (a password too long for the policy) it still tells inline.

/** The longest value of each typed field, shared by the pages' inputs and the forms' schemas. */
export const FIELD_MAX = {
  /** As accounts.ts takes an address (and the control plane's models): an invited one signs in here. */
  email: 320,
  /** Well above the accounts' rule (256), which the flows check with their own message. */
  password: 1024,
  name: 200,
  /** A code from the authenticator app, or a recovery code (`k7rq2-mx4ta`, typed with spaces maybe). */
  code: 20,
  /** The first code of an authenticator app being set up. */
  totp: 6,
} as const

const email = t.String({ maxLength: FIELD_MAX.email })
const password = t.String({ maxLength: FIELD_MAX.password })
/** A mailed link's token is 43 characters (32 random bytes, base64url): anything longer is no token. */
const token = t.String({ maxLength: 256 })
const name = t.String({ maxLength: FIELD_MAX.name })
/** A WebAuthn response as the pages' script writes it (no attestation is asked: a few KB at most). */
const credential = t.String({ maxLength: 16 * 1024 })

export namespace PageForms {
  /** The sign-in page (sign-in.tsx). */
  export const login = t.Object({ email, password })
  /** The sign-up page (sign-up.tsx): the name may be left out. */
  export const signUp = t.Object({ email, password, name: t.Optional(name) })
  /**
   * The second step of a sign-in (mfa-interaction.tsx), one of its forms: a code from the app or a
   * recovery code, a passkey's response, or "Continue" once set up.
   */
  export const mfa = t.Object({
    code: t.Optional(t.String({ maxLength: FIELD_MAX.code })),
    credential: t.Optional(credential),
    continue: t.Optional(t.String({ maxLength: 1 })),
  })
  /** The password that proves the account an IdP's identity is to be linked to (link-account.tsx). */
  export const link = t.Object({ password })
  /** A sign-in with a passkey alone; empty when the browser ran no script. */
  export const passkey = t.Object({ credential })
  /** "Send a new link" on the verify page: a button, no field. */
  export const resend = t.Object({})
  /** A reset link asked for (forgot-password.tsx). */
  export const forgot = t.Object({ email })
  /** A new password from a reset link (reset-password.tsx). */
  export const reset = t.Object({ token, password })
  /** An invitation accepted (accept-invite.tsx). */
  export const acceptInvite = t.Object({ token, password, name: t.Optional(name) })
  /** `/mfa` (mfa-manage.tsx): the authenticator app's first code, or a new passkey. */
  export const manageMfa = t.Object({
    code: t.Optional(t.String({ maxLength: FIELD_MAX.totp })),
    credential: t.Optional(credential),
  })
  /** A feature's step: its page's own fields, which the engine cannot know. */
  export const step = t.Record(t.String(), t.String())
}

/** The forms posted to an interaction's pages, by action (`/interaction/<uid>/<action>`). */
export const INTERACTION_FORMS = {
  login: PageForms.login,
  signup: PageForms.signUp,
  mfa: PageForms.mfa,
  link: PageForms.link,
  passkey: PageForms.passkey,
  verify: PageForms.resend,
  forgot: PageForms.forgot,
  step: PageForms.step,
} as const
export type InteractionFormAction = keyof typeof INTERACTION_FORMS

/** A form posted to an interaction's page, as its route checked it: the action tells which. */
export type InteractionPost = {
  [A in InteractionFormAction]: { action: A; form: Static<(typeof INTERACTION_FORMS)[A]> }
}[InteractionFormAction]

export type LoginForm = Static<typeof PageForms.login>
export type SignUpForm = Static<typeof PageForms.signUp>
export type MfaForm = Static<typeof PageForms.mfa>
export type LinkForm = Static<typeof PageForms.link>
export type PasskeySignInForm = Static<typeof PageForms.passkey>
export type ForgotForm = Static<typeof PageForms.forgot>
export type ResetForm = Static<typeof PageForms.reset>
export type AcceptInviteForm = Static<typeof PageForms.acceptInvite>
export type ManageMfaForm = Static<typeof PageForms.manageMfa>
