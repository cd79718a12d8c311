import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'

export type AppType = 'web' | 'spa' | 'native'

/** OIDC applications (clients), read live by each instance's adapter. */
export const apps = sqliteTable(
  'apps',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    name: text('name').notNull(),
    clientId: text('client_id').notNull(),
    /** SHA-256 of the secret (web apps only); the secret itself is shown once. */
    clientSecretHash: text('client_secret_hash'),
    appType: text('app_type').$type<AppType>().notNull(),
    redirectUris: text('redirect_uris', { mode: 'json' }).notNull().$type<string[]>(),
    postLogoutRedirectUris: text('post_logout_redirect_uris', { mode: 'json' }).notNull().$type<string[]>(),
    devMode: integer('dev_mode', { mode: 'boolean' }).notNull().default(false),
    /** Extra OAuth grants beyond what the type implies (e.g. device code for the CLI). */
    extraGrants: text('extra_grants', { mode: 'json' }).notNull().$type<string[]>().default([]),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [uniqueIndex('apps_client_id_idx').on(t.clientId), index('apps_workspace_idx').on(t.workspaceId)],
)
