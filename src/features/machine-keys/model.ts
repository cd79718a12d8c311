import { t } from 'elysia'
import { nameField } from '../../shared/display-names'
import { resourceId } from '../../shared/formats'

/** A scope a machine key may hold (SPEC "Machine-key scopes"; a tenant slug as DESIGN "Tenants"). */
export const SCOPE_PATTERN =
  '^(workspace:(read|write|admin)|tenant:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?:(read|write))$'

/** An ISO 8601 date and time with its zone (`Z` or an offset). */
const ISO_TIME = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2})$'

/** DESIGN "Machine keys": non-human, scoped, revocable credentials of one workspace. */
export namespace MachineKeyModel {
  export const scope = t.String({
    pattern: SCOPE_PATTERN,
    description: '`workspace:read|write|admin` or `tenant:<slug>:read|write`',
    errorMessage: {
      pattern: 'Use workspace:read, workspace:write, workspace:admin or tenant:<slug>:read|write',
    },
  })

  export const create = t.Object(
    {
      name: nameField(100),
      scopes: t.Array(scope, {
        minItems: 1,
        maxItems: 20,
        description: 'What tokens of this key may do; a key can never grant a scope its creator lacks',
        errorMessage: { minItems: 'Choose at least one scope.', maxItems: 'Use at most 20 scopes.' },
      }),
      expires_at: t.Optional(
        t.Nullable(
          t.String({
            pattern: ISO_TIME,
            maxLength: 40,
            description: 'ISO 8601 with a time zone, in the future; null or omitted: the key never expires',
            errorMessage: { pattern: 'Use an ISO 8601 date and time, e.g. 2027-01-31T00:00:00Z.' },
          }),
        ),
      ),
    },
    { additionalProperties: false },
  )
  export type Create = typeof create.static

  export const status = t.Union([t.Literal('active'), t.Literal('rotating'), t.Literal('expired')], {
    description: '`rotating`: replaced by a rotation, works until `revokes_at`',
  })

  export const out = t.Object({
    id: t.String({ description: 'mk_ + ULID; also the key file `key_id`' }),
    name: t.String(),
    scopes: t.Array(t.String()),
    expires_at: t.Nullable(t.String({ description: 'null: never expires' })),
    created_at: t.String(),
    last_used_at: t.Nullable(t.String({ description: 'The last token exchange with this key' })),
    status,
    revokes_at: t.Nullable(t.String({ description: 'Set while `rotating`: when the key stops working' })),
  })
  export type Out = typeof out.static

  /** The key file: shown once, in the response that creates (or rotates into) the key. */
  export const keyFile = t.Object({
    type: t.Literal('service_account'),
    key_id: t.String(),
    key_secret: t.String({ description: 'PKCS#8 PEM of an ES256 (P-256) private key; never stored' }),
    workspace_id: t.String(),
    token_url: t.String({ description: 'Where to exchange a signed assertion for an access token' }),
  })

  export const created = t.Composite([out, t.Object({ key: keyFile })])

  export const list = t.Object({ items: t.Array(out), total: t.Integer() })

  export const params = t.Object({
    workspace_id: t.String({ format: 'uuid' }),
    key_id: resourceId(),
  })

  export const deleted = t.Object({ deleted: t.Literal(true) })

  /** RFC 6749 §5.1 (the exchange's answer). */
  export const token = t.Object({
    access_token: t.String(),
    token_type: t.Literal('Bearer'),
    expires_in: t.Integer(),
    scope: t.String(),
  })

  /** RFC 6749 §5.2 (the exchange's refusals, parsed by OAuth client libraries). */
  export const tokenError = t.Object({ error: t.String(), error_description: t.String() })
}
