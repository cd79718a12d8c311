import { t } from 'elysia'
import { nameField } from '../../shared/display-names'
import { resourceId } from '../../shared/formats'

export namespace AppModel {
  export const appType = t.Union([t.Literal('web'), t.Literal('spa'), t.Literal('native')], {
    description: 'web: confidential, gets a client_secret; spa and native: public, PKCE required',
  })

  const uri = t.String({
    minLength: 1,
    maxLength: 2083,
    description: 'Absolute URI (format uri)',
    errorMessage: { maxLength: 'Use at most 2083 characters.' },
  })
  /** Per list: enough for any real app, and a bound on what every authorization request compares. */
  const MAX_URIS = 100

  export const create = t.Object({
    name: nameField(200),
    redirect_uris: t.Array(uri, {
      minItems: 1,
      maxItems: MAX_URIS,
      errorMessage: {
        minItems: 'Add at least one redirect URI.',
        maxItems: `Use at most ${MAX_URIS} redirect URIs.`,
      },
    }),
    post_logout_redirect_uris: t.Optional(
      t.Array(uri, {
        maxItems: MAX_URIS,
        errorMessage: { maxItems: `Use at most ${MAX_URIS} post-logout URIs.` },
      }),
    ),
    app_type: t.Optional(appType),
    dev_mode: t.Optional(
      t.Boolean({
        description: 'Allows http://localhost and http://127.0.0.1 redirect URIs; for local development only',
      }),
    ),
  })

  /** AppCreate's fields, each optional; `app_type` only as it is (a type never changes). */
  export const update = t.Partial(create, {
    description: 'The fields to change, with the rules of AppCreate; `app_type` cannot change',
  })

  export const rotate = t.Object({
    grace_hours: t.Optional(
      t.Integer({
        minimum: 0,
        maximum: 24,
        description: 'How long the previous secret is still accepted (0: refused at once, the default)',
        errorMessage: { minimum: 'Use 0 to 24 hours.', maximum: 'Use 0 to 24 hours.' },
      }),
    ),
  })

  export const rotated = t.Object({
    client_id: t.String(),
    client_secret: t.String({ description: 'The new secret: shown once, never retrievable again' }),
    previous_secret_expires_at: t.Nullable(
      t.String({ description: 'Until when the previous secret is accepted (ISO 8601); null: no longer' }),
    ),
  })

  export const credentials = t.Object({
    id: t.String(),
    name: t.String(),
    client_id: t.String(),
    client_secret: t.Nullable(
      t.String({ description: 'Only for web apps; shown once, never retrievable again' }),
    ),
    app_type: appType,
    issuer: t.String(),
    discovery_url: t.String(),
  })

  export const out = t.Object({
    id: t.String(),
    name: t.String(),
    client_id: t.String(),
    app_type: appType,
    redirect_uris: t.Array(t.String()),
    post_logout_redirect_uris: t.Array(t.String()),
    dev_mode: t.Boolean(),
  })

  export const list = t.Object({ items: t.Array(out), total: t.Integer() })

  export const params = t.Object({
    workspace_id: t.String({ format: 'uuid' }),
    app_id: resourceId(),
  })

  export type Create = typeof create.static
  export type Update = typeof update.static
}
