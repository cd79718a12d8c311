import { boolean, epochMs, integer, table, text } from '../../db/columns'
import type { MfaMode } from '../../identity'

/**
 * One login policy per workspace (DESIGN "Login policy"), created with the defaults by provisioning
 * (and by migration for workspaces that existed before). A workspace without a row has the defaults.
 */
export const loginPolicies = table('login_policies', {
  workspaceId: text('workspace_id').primaryKey(),
  allowPassword: boolean('allow_password').notNull(),
  allowRegistration: boolean('allow_registration').notNull(),
  allowExternalIdps: boolean('allow_external_idps').notNull(),
  requireEmailVerification: boolean('require_email_verification').notNull(),
  mfa: text('mfa').$type<MfaMode>().notNull(),
  passwordMinLength: integer('password_min_length').notNull(),
  lockoutThreshold: integer('lockout_threshold').notNull(),
  lockoutMinutes: integer('lockout_minutes').notNull(),
  sessionLifetimeHours: integer('session_lifetime_hours').notNull(),
  updatedAt: epochMs('updated_at').notNull(),
})
