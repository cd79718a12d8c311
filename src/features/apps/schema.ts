import { sql } from 'drizzle-orm'
import { boolean, epochMs, index, json, table, text, uniqueIndex } from '../../db/columns'

export type AppType = 'web' | 'spa' | 'native'

/**
 * OIDC applications (clients), read live by each instance's adapter through the view
 * instance_client_records (migration instance_client_records): each app as the identity plane's
 * client record. A migration that changes these columns, or rebuilds this table (drizzle-kit does
 * on SQLite for most changes), drops that view first and makes it again.
 */
export const apps = table(
  'apps',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    name: text('name').notNull(),
    clientId: text('client_id').notNull(),
    /** SHA-256 of the secret (web apps only); the secret itself is shown once. */
    clientSecretHash: text('client_secret_hash'),
    /**
     * The secret before the last rotation (SHA-256), accepted beside the new one until
     * `previousSecretExpiresAt` when the rotation asked for a grace; null without one.
     */
    previousSecretHash: text('previous_secret_hash'),
    previousSecretExpiresAt: epochMs('previous_secret_expires_at'),
    appType: text('app_type').$type<AppType>().notNull(),
    redirectUris: json<string[]>('redirect_uris').notNull(),
    postLogoutRedirectUris: json<string[]>('post_logout_redirect_uris').notNull(),
    devMode: boolean('dev_mode').notNull().default(false),
    /** Extra OAuth grants beyond what the type implies (e.g. device code for the CLI). */
    extraGrants: json<string[]>('extra_grants').notNull().default(sql`'[]'`),
    createdAt: epochMs('created_at').notNull(),
  },
  // A workspace's apps in creation order: its listing, and its oldest few that a cold instance's
  // load brings (the view instance_client_records, migration instance_client_records), read that far only.
  (t) => [
    uniqueIndex('apps_client_id_idx').on(t.clientId),
    index('apps_workspace_idx').on(t.workspaceId, t.createdAt, t.id),
  ],
)
