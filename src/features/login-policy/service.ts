import { eq, sql } from 'drizzle-orm'
import type { Actor } from '../../access/model'
import { fieldChanges } from '../../audit/record'
import type { Core } from '../../core'
import { preparedRead } from '../../db/prepared'
import type { Conn } from '../../db/store'
import { DEFAULT_LOGIN_POLICY, type LoginPolicy } from '../../identity'
import { appError } from '../../shared/errors'
import type { Workspace } from '../workspaces/service'
import { LoginPolicyErrors } from './errors'
import { LoginPolicyModel } from './model'
import { loginPolicies } from './schema'

type Row = typeof loginPolicies.$inferSelect

const policyOf = (row: Row | undefined): LoginPolicy =>
  row
    ? {
        allowPassword: row.allowPassword,
        allowRegistration: row.allowRegistration,
        allowExternalIdps: row.allowExternalIdps,
        requireEmailVerification: row.requireEmailVerification,
        mfa: row.mfa,
        passwordMinLength: row.passwordMinLength,
        lockoutThreshold: row.lockoutThreshold,
        lockoutMinutes: row.lockoutMinutes,
        sessionLifetimeHours: row.sessionLifetimeHours,
      }
    : { ...DEFAULT_LOGIN_POLICY }

/** LoginPolicyView (DESIGN's names) of a policy. */
const loginPolicyOut = (p: LoginPolicy): LoginPolicyModel.View => ({
  allow_password: p.allowPassword,
  allow_registration: p.allowRegistration,
  allow_external_idps: p.allowExternalIdps,
  require_email_verification: p.requireEmailVerification,
  mfa: p.mfa,
  password_min_length: p.passwordMinLength,
  lockout_threshold: p.lockoutThreshold,
  lockout_minutes: p.lockoutMinutes,
  session_lifetime_hours: p.sessionLifetimeHours,
})

/** Every field of LoginPolicyView, as the audit log names them (none is a secret). */
const POLICY_FIELDS = Object.keys(LoginPolicyModel.view.properties) as (keyof LoginPolicyModel.View)[]

/** The fields a LoginPolicyUpdate sets; an omitted one keeps its value. */
const changesOf = (u: LoginPolicyModel.Update): Partial<LoginPolicy> => {
  const all: Partial<LoginPolicy> = {
    allowPassword: u.allow_password,
    allowRegistration: u.allow_registration,
    allowExternalIdps: u.allow_external_idps,
    requireEmailVerification: u.require_email_verification,
    mfa: u.mfa,
    passwordMinLength: u.password_min_length,
    lockoutThreshold: u.lockout_threshold,
    lockoutMinutes: u.lockout_minutes,
    sessionLifetimeHours: u.session_lifetime_hours,
  }
  return Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined))
}

// Read by every instance a node loads (prepared.ts).
const policyRow = preparedRead((db) =>
  db
    .select()
    .from(loginPolicies)
    .where(eq(loginPolicies.workspaceId, sql.placeholder('workspaceId')))
    .limit(1)
    .prepare('login_policy_of'),
)

async function read(conn: Pick<Conn, 'db'>, workspaceId: string): Promise<LoginPolicy> {
  const [row] = await policyRow(conn.db).execute({ workspaceId })
  return policyOf(row)
}

/**
 * A workspace's login policy as the identity plane applies it (its `loginPolicy` source of the identity extension): its row,
 * or the defaults when it has none (a workspace provisioned before its step ran).
 */
export const loginPolicyOf =
  (core: Pick<Core, 'db'>) =>
  (workspaceId: string): Promise<LoginPolicy> =>
    read(core, workspaceId)

/** The login policy of a workspace: read, and changed (partially) by its admins. */
export function createLoginPolicyService(core: Core) {
  return {
    async get(workspace: Workspace): Promise<LoginPolicyModel.View> {
      return loginPolicyOut(await read(core, workspace.id))
    },

    /**
     * Applies the fields given, keeping the others (read and written under the workspace's lock, so
     * two partial changes at once both land), then makes every node rebuild the instance with it.
     * `login_policy.updated` names the fields that changed, before and after; a save that changes
     * nothing records nothing.
     */
    async update(
      workspace: Workspace,
      actor: Actor,
      input: LoginPolicyModel.Update,
    ): Promise<LoginPolicyModel.View> {
      if (workspace.state === 'deleting') throw appError(LoginPolicyErrors.WORKSPACE_DELETING, 409)
      const now = core.clock.now()
      const policy = await core.store.tx(async (tx) => {
        await tx.serialize(`login-policy:${workspace.id}`)
        const before = await read(tx, workspace.id)
        const next: LoginPolicy = { ...before, ...changesOf(input) }
        await tx.db
          .insert(loginPolicies)
          .values({ workspaceId: workspace.id, ...next, updatedAt: now })
          .onConflictDoUpdate({ target: loginPolicies.workspaceId, set: { ...next, updatedAt: now } })
        const changes = fieldChanges(loginPolicyOut(before), loginPolicyOut(next), POLICY_FIELDS)
        if (Object.keys(changes).length > 0)
          await core.audit(
            {
              workspaceId: workspace.id,
              actor,
              action: 'login_policy.updated',
              target: { type: 'login_policy', id: workspace.id },
              changes,
            },
            { tx },
          )
        return next
      })
      await core.instances.changed(workspace.id)
      return loginPolicyOut(policy)
    },
  }
}

/** The provisioning step: the workspace starts with the defaults (a policy already set is kept). */
export async function createDefaultLoginPolicy(core: Pick<Core, 'db' | 'clock'>, workspaceId: string) {
  await core.db
    .insert(loginPolicies)
    .values({ workspaceId, ...DEFAULT_LOGIN_POLICY, updatedAt: core.clock.now() })
    .onConflictDoNothing({ target: loginPolicies.workspaceId })
}

/** The login policy's teardown step of a workspace deletion. */
export async function deleteWorkspaceLoginPolicy(core: Pick<Core, 'db'>, workspaceId: string): Promise<void> {
  await core.db.delete(loginPolicies).where(eq(loginPolicies.workspaceId, workspaceId))
}
