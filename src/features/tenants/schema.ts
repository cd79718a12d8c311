import { epochMs, index, json, primaryKey, table, text, uniqueIndex } from '../../db/columns'

/**
 * Tenants (DESIGN "Tenants"): a workspace's own customers, the organisations of its B2B apps. The
 * slug is unique per workspace by an index, so two creations racing on one slug (on two nodes)
 * cannot both succeed; it names the tenant in `tenant:<slug>:…` scopes and the `tenants` claim.
 */
export const tenants = table(
  'tenants',
  {
    /** `ten_<ULID>`: creation order, which lists and their cursors follow. */
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    slug: text('slug').notNull(),
    name: text('name').notNull(),
    metadata: json<Record<string, unknown>>('metadata').notNull(),
    createdAt: epochMs('created_at').notNull(),
    updatedAt: epochMs('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('tenants_workspace_slug_idx').on(t.workspaceId, t.slug),
    index('tenants_workspace_idx').on(t.workspaceId, t.id),
  ],
)

/**
 * Users of the workspace's identity instance who belong to a tenant. The user is the identity
 * plane's account: its deletion removes these rows through the users feature, in its transaction.
 */
export const tenantMembers = table(
  'tenant_members',
  {
    tenantId: text('tenant_id').notNull(),
    /** The account id (`usr_<ULID>`) in the workspace's instance. */
    userId: text('user_id').notNull(),
    workspaceId: text('workspace_id').notNull(),
    createdAt: epochMs('created_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.userId] }),
    index('tenant_members_user_idx').on(t.workspaceId, t.userId),
  ],
)

/**
 * Addresses invited to a tenant by email (DESIGN "Decisions of 2026-12-05": how a tenant key adds
 * a user it cannot see). The account with the address joins at its next sign-in once the address
 * is proved; the row goes then, with its tenant, or at `expires_at` (the periodic purge).
 */
export const tenantInvitations = table(
  'tenant_invitations',
  {
    tenantId: text('tenant_id').notNull(),
    /** Normalised as accounts store it. */
    email: text('email').notNull(),
    workspaceId: text('workspace_id').notNull(),
    /** Who invited (`key:…` or `user:…`): the actor of the membership the sign-in adds. */
    invitedBy: text('invited_by').notNull(),
    createdAt: epochMs('created_at').notNull(),
    expiresAt: epochMs('expires_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.email] }),
    index('tenant_invitations_email_idx').on(t.workspaceId, t.email),
    index('tenant_invitations_expiry_idx').on(t.expiresAt),
  ],
)
