import { epochMs, index, table, text } from '../../db/columns'

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
    /** Last provisioning step completed, so a retry resumes after it. */
    provisioningStep: text('provisioning_step'),
    createdAt: epochMs('created_at').notNull(),
    updatedAt: epochMs('updated_at').notNull(),
  },
  (t) => [index('workspaces_owner_idx').on(t.ownerId)],
)
