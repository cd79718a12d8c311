import type { AccessFinder } from '../../access/guard'
import type { WorkspaceScope } from '../../access/scopes'
import type { Core } from '../../core'
import type { MemberRole } from './schema'
import type { Workspace } from './service'

const COLUMNS = `w.id, w.name, w.owner_id AS "ownerId", w.state, w.plan, w.provisioning_error AS "provisioningError",
    w.provisioning_step AS "provisioningStep", w.data_plane_rps AS "dataPlaneRps", w.created_at AS "createdAt",
    w.updated_at AS "updatedAt"`

// On every workspace-scoped request, one query: the workspace and the caller's role in it.
const WITH_ROLE = `
  SELECT ${COLUMNS}, m.role FROM workspaces w
  LEFT JOIN workspace_members m ON m.workspace_id = w.id AND m.account_id = $2
  WHERE w.id = $1`
const BY_ID = `SELECT ${COLUMNS} FROM workspaces w WHERE w.id = $1`

/** DESIGN "Who may do what": what each role holds. */
const ROLE_SCOPE: Record<MemberRole, WorkspaceScope> = {
  owner: 'workspace:admin',
  admin: 'workspace:admin',
  developer: 'workspace:write',
  viewer: 'workspace:read',
}

/**
 * The workspace a path names and what the caller holds there: a member, the scope of their role
 * as it is now; a machine key, its own scopes on its own workspace. Anyone else: none of their
 * business (the guard answers 404).
 */
export const workspaceAccess =
  (core: Core): AccessFinder<Workspace> =>
  async (id, principal) => {
    if (principal.kind === 'key') {
      if (principal.key.workspaceId !== id) return undefined
      const [workspace] = await core.store.query<Workspace>(BY_ID, [id])
      return workspace && { workspace, scopes: principal.key.scopes }
    }
    const [row] = await core.store.query<Workspace & { role: MemberRole | null }>(WITH_ROLE, [
      id,
      principal.account.id,
    ])
    if (!row?.role) return undefined
    const { role, ...workspace } = row
    return { workspace, scopes: [ROLE_SCOPE[role]] }
  }
