import { t } from 'elysia'
import { resourceId } from '../../shared/formats'
import { nextCursorField, pageQuery } from '../../shared/pagination'

/** DESIGN "Users": the users of a workspace's identity instance. */
export namespace UserModel {
  export const status = t.Union([t.Literal('active'), t.Literal('invited')], {
    description: '`invited` until the invitation is accepted (no sign-in before)',
  })

  export const out = t.Object({
    id: t.String({ description: 'usr_ + ULID' }),
    email: t.String(),
    name: t.String(),
    email_verified: t.Boolean(),
    status,
    via_idp: t.Nullable(
      t.String({ description: 'The external IdP the user came from; null for password users' }),
    ),
    created_at: t.String(),
    last_sign_in_at: t.Nullable(t.String()),
  })

  export const list = t.Object({
    items: t.Array(out),
    total: t.Integer({ description: 'Users matching `q`, all pages together' }),
    next_cursor: nextCursorField,
  })

  export const listQuery = pageQuery('Email or name prefix, case-insensitive')

  export const invite = t.Object(
    {
      email: t.String({
        minLength: 3,
        maxLength: 320,
        pattern: '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$',
        description: 'The address the invitation is mailed to',
        errorMessage: { pattern: 'Enter a valid email address.', minLength: 'Enter an email address.' },
      }),
      name: t.Optional(
        t.String({ maxLength: 200, errorMessage: { maxLength: 'Use at most 200 characters.' } }),
      ),
    },
    { additionalProperties: false },
  )

  export const invited = t.Object({
    id: t.String(),
    email: t.String(),
    status: t.Literal('invited'),
    invited_at: t.String(),
    expires_at: t.String({ description: 'The invitation link works for 7 days' }),
  })

  export const params = t.Object({
    workspace_id: t.String({ format: 'uuid' }),
    user_id: resourceId(),
  })

  export type Invite = typeof invite.static
  export type Out = typeof out.static
}
