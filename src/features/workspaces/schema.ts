import { epochMs, index, integer, primaryKey, table, text, uniqueIndex } from '../../db/columns'

export type WorkspaceState = 'provisioning' | 'provisioning_failed' | 'active' | 'deleting'
export type Plan = 'free' | 'pro' | 'enterprise'

/** A customer workspace; its identity instance is served only while it is `active`. */
export const workspaces = table(
  'workspaces',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    /** Account id (in the platform instance) of the owner. */
    ownerId: text('owner_id').notNull(),
    state: text('state').$type<WorkspaceState>().notNull().default('provisioning'),
    plan: text('plan').$type<Plan>().notNull().default('free'),
    provisioningError: text('provisioning_error'),
    /** The identity plane's own rate (requests per second) on Pro and above; null: the default. */
    dataPlaneRps: integer('data_plane_rps'),
    /** Last provisioning step completed, so a retry resumes after it. */
    provisioningStep: text('provisioning_step'),
    createdAt: epochMs('created_at').notNull(),
    updatedAt: epochMs('updated_at').notNull(),
  },
  (t) => [index('workspaces_owner_idx').on(t.ownerId)],
)

/** DESIGN "Who may do what": owner and admin hold workspace:admin, developer write, viewer read. */
export type MemberRole = 'owner' | 'admin' | 'developer' | 'viewer'

/**
 * Who may act on a workspace: platform accounts with a role. Read on every workspace-scoped
 * request (joined to the workspace row), so a role change acts on the next request.
 */
export const workspaceMembers = table(
  'workspace_members',
  {
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    /** Account id in the platform instance. */
    accountId: text('account_id').notNull(),
    role: text('role').$type<MemberRole>().notNull(),
    createdAt: epochMs('created_at').notNull(),
    updatedAt: epochMs('updated_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.accountId] }),
    index('workspace_members_account_idx').on(t.accountId),
  ],
)

/**
 * An email without a platform account, invited to a workspace: the mailed link (its hash here)
 * joins the account that signs up with that address. Single use; expires.
 */
export const memberInvitations = table(
  'member_invitations',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    email: text('email').notNull(),
    role: text('role').$type<MemberRole>().notNull(),
    tokenHash: text('token_hash').notNull(),
    invitedBy: text('invited_by').notNull(),
    createdAt: epochMs('created_at').notNull(),
    expiresAt: epochMs('expires_at').notNull(),
  },
  (t) => [
    uniqueIndex('member_invitations_workspace_email_idx').on(t.workspaceId, t.email),
    uniqueIndex('member_invitations_token_idx').on(t.tokenHash),
  ],
)
