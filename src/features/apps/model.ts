import { t } from 'elysia'
import { resourceId } from '../../shared/formats'
import { nameField } from '../../shared/names'

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
}
