import { type TSchema, t } from 'elysia'
import { nameField } from '../../shared/display-names'

const COLOUR_RULE = 'Use a colour written #rrggbb, e.g. #4f46e5.'
const URL_RULE = 'Enter an https URL of at most 2000 characters.'

const colour = t.String({
  pattern: '^#[0-9a-fA-F]{6}$',
  description: '`#rrggbb`',
  errorMessage: { pattern: COLOUR_RULE },
})

/** The scheme is checked here too, so a form shows it with the other fields' problems; the service checks the URL as parsed. */
const httpsUrl = t.String({
  maxLength: 2000,
  pattern: '^\\s*[hH][tT][tT][pP][sS]://',
  description: 'https URL',
})

/**
 * Omitted: kept as it is; null: back to the platform's. A value that is neither is refused with
 * `message` (the union's own, which a form shows beside the field).
 */
const settable = <T extends TSchema>(schema: T, message: string) =>
  t.Optional(t.Union([schema, t.Null()], { errorMessage: { anyOf: message } }))

/** DESIGN "Branding": a workspace's look on its hosted pages and mails. */
export namespace BrandingModel {
  export const update = t.Object(
    {
      display_name: settable(nameField(100), 'Use 1 to 100 characters.'),
      primary_color: settable(colour, COLOUR_RULE),
      background_color: settable(colour, COLOUR_RULE),
      text_color: settable(colour, COLOUR_RULE),
      privacy_policy_url: settable(httpsUrl, URL_RULE),
      terms_url: settable(httpsUrl, URL_RULE),
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
