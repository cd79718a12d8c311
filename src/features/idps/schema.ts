import { boolean, epochMs, index, json, table, text } from '../../db/columns'

export type IdpType = 'google' | 'github' | 'microsoft' | 'oidc'

/**
 * A workspace's external identity providers (DESIGN "IdPs"). The client secret is sealed (it is
 * sent to the provider, so it cannot be hashed) and never returned. `active` is the IdP's place on
 * the sign-in page: a deletion takes it off first, then deletes the row (SPEC: both steps idempotent).
 */
export const idps = table(
  'idps',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    type: text('type').$type<IdpType>().notNull(),
    name: text('name').notNull(),
    clientId: text('client_id').notNull(),
    clientSecretSealed: text('client_secret_sealed').notNull(),
    /** The issuer of a generic `oidc` IdP (and Microsoft's tenant issuer); null for the others. */
    issuer: text('issuer'),
    scopes: json<string[]>('scopes').notNull(),
    active: boolean('active').notNull(),
    /**
     * DESIGN "IdPs", set by `workspace:admin` only: the IdP's verified address links its identity to
     * an existing account of that address without the account's own sign-in, and its `amr` counts
     * as the login policy's second factor. Off, an IdP a developer added cannot sign in as anyone else.
     */
    trustEmail: boolean('trust_email').notNull().default(false),
    trustMfa: boolean('trust_mfa').notNull().default(false),
    createdAt: epochMs('created_at').notNull(),
  },
  (t) => [index('idps_workspace_idx').on(t.workspaceId, t.createdAt)],
)
