import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { DEFAULT_LOGIN_POLICY as D } from '../../identity'

/**
 * DESIGN "Login policy": the names and ranges of LoginPolicyView and LoginPolicyUpdate. The defaults
 * are the identity plane's `DEFAULT_LOGIN_POLICY` (written once there); they appear here only as
 * documentation, never as a schema `default`, which would fill an omitted PATCH field.
 */
export namespace LoginPolicyModel {
  // TypeBox's integer, not Elysia's (a union that also takes digit strings): a JSON number only,
  // and each rule (type, minimum, maximum) reported as itself, with its message.
  const range = (minimum: number, maximum: number, def: number, description: string) =>
    Type.Integer({
      minimum,
      maximum,
      description: `${description} (${minimum}..${maximum}, default ${def})`,
      errorMessage: {
        type: `Enter a whole number from ${minimum} to ${maximum}.`,
        minimum: `Use a number from ${minimum} to ${maximum}.`,
        maximum: `Use a number from ${minimum} to ${maximum}.`,
      },
    })
  const flag = (def: boolean, description: string) =>
    t.Boolean({ description: `${description} (default ${def})` })

  export const mfa = t.Union([t.Literal('off'), t.Literal('optional'), t.Literal('required')], {
    description: `off; optional: users may enrol TOTP or a passkey; required: every user enrols at next sign-in (default ${D.mfa})`,
    errorMessage: { anyOf: 'Choose off, optional or required.' },
  })

  /** Every field of the policy with its rule: the view, and the dashboard's full form. */
  export const fields = {
    allow_password: flag(D.allowPassword, 'Users may sign in with a password'),
    allow_registration: flag(D.allowRegistration, 'Anyone may sign up on the hosted pages'),
    allow_external_idps: flag(D.allowExternalIdps, 'Users may sign in with external identity providers'),
    require_email_verification: flag(
      D.requireEmailVerification,
      'An unverified user must verify the address before any code is issued',
    ),
    mfa,
    password_min_length: range(8, 128, D.passwordMinLength, 'Shortest password accepted'),
    lockout_threshold: range(0, 100, D.lockoutThreshold, 'Failed attempts that lock an account; 0 = never'),
    lockout_minutes: range(1, 1440, D.lockoutMinutes, 'How long a locked account stays locked'),
    session_lifetime_hours: range(1, 8760, D.sessionLifetimeHours, 'Lifetime of a hosted sign-in session'),
  }

  export const view = t.Object(fields)

  /** PATCH: every field optional; an omitted field keeps its value. */
  export const update = t.Partial(t.Object(fields), { additionalProperties: false })

  export const params = t.Object({ workspace_id: t.String({ format: 'uuid' }) })

  export type View = typeof view.static
  export type Update = typeof update.static
}
