import { t } from 'elysia'
import { nameField } from '../../shared/display-names'
import { resourceId } from '../../shared/formats'

/** DESIGN "IdPs": a workspace's external identity providers. */
export namespace IdpModel {
  export const params = t.Object({ workspace_id: t.String({ format: 'uuid' }), idp_id: resourceId() })

  export const type = t.Union(
    [t.Literal('google'), t.Literal('github'), t.Literal('microsoft'), t.Literal('oidc')],
    { errorMessage: { anyOf: 'Choose a provider.' } },
  )

  export const create = t.Object(
    {
      type,
      name: t.Optional(nameField(100)),
      client_id: t.String({
        minLength: 1,
        maxLength: 500,
        errorMessage: { minLength: 'Enter the client ID.', maxLength: 'Use at most 500 characters.' },
      }),
      client_secret: t.String({
        minLength: 1,
        maxLength: 2000,
        errorMessage: { minLength: 'Enter the client secret.', maxLength: 'Use at most 2000 characters.' },
      }),
      issuer: t.Optional(
        t.String({
          minLength: 1,
          maxLength: 2000,
          description: '`oidc` only: the issuer URL (https)',
          errorMessage: { maxLength: 'Use at most 2000 characters.' },
        }),
      ),
      scopes: t.Optional(
        t.Array(
          t.String({
            pattern: '^[\\x21\\x23-\\x5b\\x5d-\\x7e]{1,100}$',
            errorMessage: { pattern: 'Use at most 100 visible characters, without quotes or backslashes.' },
          }),
          { maxItems: 20, uniqueItems: true, errorMessage: { maxItems: 'Use at most 20 scopes.' } },
        ),
      ),
      trust_email: t.Optional(
        t.Boolean({
          default: false,
          description:
            "`workspace:admin` only: the IdP's verified address signs in to an existing account of that address without its own password and second factor",
        }),
      ),
      trust_mfa: t.Optional(
        t.Boolean({
          default: false,
          description: "`workspace:admin` only: the IdP's `amr` counts as the login policy's second factor",
        }),
      ),
    },
    { additionalProperties: false },
  )
  export type Create = typeof create.static

  export const out = t.Object({
    id: t.String({ description: 'idp_ + ULID' }),
    type,
    name: t.String(),
    client_id: t.String(),
    issuer: t.Nullable(t.String()),
    scopes: t.Array(t.String()),
    redirect_uri: t.String({ description: 'Register this at the provider' }),
    trust_email: t.Boolean(),
    trust_mfa: t.Boolean(),
    created_at: t.String(),
  })
  export type Out = typeof out.static

  export const list = t.Object({ items: t.Array(out), total: t.Integer() })
  export const deleted = t.Object({ deleted: t.Literal(true) })
}
