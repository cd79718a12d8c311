import { t } from 'elysia'
import { nameField } from '../../shared/names'

const colour = t.String({
  pattern: '^#[0-9a-fA-F]{6}$',
  description: '`#rrggbb`',
  errorMessage: { pattern: 'Use a colour written #rrggbb, e.g. #4f46e5.' },
})

const httpsUrl = t.String({
  minLength: 1,
  maxLength: 2000,
  description: 'https URL',
  errorMessage: { minLength: 'Enter a URL.', maxLength: 'Use at most 2000 characters.' },
})

/** Omitted: kept as it is; null: back to the platform's. */
const settable = <T extends Parameters<typeof t.Nullable>[0]>(schema: T) => t.Optional(t.Nullable(schema))

/** DESIGN "Branding": a workspace's look on its hosted pages and mails. */
export namespace BrandingModel {
  export const update = t.Object(
    {
      display_name: settable(nameField(100)),
      primary_color: settable(colour),
      background_color: settable(colour),
      text_color: settable(colour),
      privacy_policy_url: settable(httpsUrl),
      terms_url: settable(httpsUrl),
    },
    { additionalProperties: false },
  )
  export type Update = typeof update.static

  export const view = t.Object({
    display_name: t.Nullable(t.String()),
    primary_color: t.Nullable(t.String({ description: '`#rrggbb`' })),
    background_color: t.Nullable(t.String({ description: '`#rrggbb`' })),
    text_color: t.Nullable(t.String({ description: '`#rrggbb`' })),
    privacy_policy_url: t.Nullable(t.String()),
    terms_url: t.Nullable(t.String()),
    logo_url: t.Nullable(
      t.String({ description: 'Served by the workspace instance: `{auth_url}/branding/logo?v=<version>`' }),
    ),
  })
  export type View = typeof view.static

  export const logo = t.Object({
    logo: t.File({
      description:
        'PNG, JPEG, WebP or SVG, at most 1 MiB; the type is read from the content. An SVG is sanitised.',
    }),
  })
}
