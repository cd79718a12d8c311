import { t } from 'elysia'

export namespace AuthModel {
  export const loginQuery = t.Object({
    idp_hint: t.Optional(t.String({ maxLength: 64 })),
    next: t.Optional(t.String({ maxLength: 4096 })),
  })

  export const callbackQuery = t.Object({
    code: t.Optional(t.String({ maxLength: 2048 })),
    state: t.Optional(t.String({ maxLength: 256 })),
    error: t.Optional(t.String({ maxLength: 256 })),
    error_description: t.Optional(t.String({ maxLength: 2048 })),
    iss: t.Optional(t.String({ maxLength: 2048 })),
  })

  const person = t.Object(
    {
      kind: t.Literal('user'),
      id: t.String(),
      email: t.String(),
      email_verified: t.Boolean(),
      name: t.String(),
      is_platform_admin: t.Boolean(),
      auth: t.Union([t.Literal('session'), t.Literal('bearer')]),
      csrf_token: t.Optional(t.String()),
    },
    { additionalProperties: true },
  )
  /** A machine key's token describes the key (DESIGN "Machine keys"). */
  const machineKey = t.Object({
    kind: t.Literal('machine_key'),
    id: t.String(),
    workspace_id: t.String(),
    scopes: t.Array(t.String()),
    auth: t.Literal('bearer'),
  })
  export const me = t.Union([person, machineKey])

  export const deviceStart = t.Object({
    device_code: t.String(),
    user_code: t.String(),
    verification_uri: t.String(),
    verification_uri_complete: t.String(),
    expires_in: t.Integer(),
    interval: t.Integer(),
  })

  export const devicePoll = t.Object({ device_code: t.String({ minLength: 1, maxLength: 512 }) })

  export const devicePollResult = t.Object({
    status: t.Union([
      t.Literal('pending'),
      t.Literal('complete'),
      t.Literal('slow_down'),
      t.Literal('expired'),
      t.Literal('denied'),
    ]),
    access_token: t.Optional(t.String()),
    token_type: t.Optional(t.String()),
    expires_in: t.Optional(t.Integer()),
    id_token: t.Optional(t.String()),
    refresh_token: t.Optional(t.String()),
    scope: t.Optional(t.String()),
  })
}
