import { epochMs, integer, table, text } from '../../db/columns'

/**
 * A workspace's look (DESIGN "Branding"): one row once anything is set. Every field is optional;
 * null is the platform's own.
 */
export const brandings = table('brandings', {
  workspaceId: text('workspace_id').primaryKey(),
  displayName: text('display_name'),
  /** `#rrggbb`, lower case. */
  primaryColor: text('primary_color'),
  backgroundColor: text('background_color'),
  textColor: text('text_color'),
  /** https URLs, as parsed (normalised). */
  privacyPolicyUrl: text('privacy_policy_url'),
  termsUrl: text('terms_url'),
  updatedAt: epochMs('updated_at').notNull(),
})

/**
 * A workspace's logo, in the store: every node serves it, and nodes share nothing else. Base64
 * text, the same on both stores (and moved unchanged by `store copy`); at most 1 MiB decoded. An
 * SVG is kept as sanitised, never as uploaded. Apart from `brandings` so that reading the
 * branding never reads the bytes.
 */
export const brandingLogos = table('branding_logos', {
  workspaceId: text('workspace_id').primaryKey(),
  /** Sniffed from the bytes at upload: image/png, image/jpeg, image/webp or image/svg+xml. */
  contentType: text('content_type').notNull(),
  dataBase64: text('data_base64').notNull(),
  /** The first 32 hex digits of the bytes' SHA-256: the ETag, and the `?v=` of the logo's URL. */
  version: text('version').notNull(),
  size: integer('size').notNull(),
  createdAt: epochMs('created_at').notNull(),
})
