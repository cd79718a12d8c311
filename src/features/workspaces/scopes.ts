import type { Core } from '../../core'
import type { WorkspaceScope } from '../../shared/plugins/auth'
import type { Workspace } from './service'

// On every workspace-scoped request: raw SQL, no query building per call.
const BY_ID = `
  SELECT id, name, owner_id AS "ownerId", state, plan, provisioning_error AS "provisioningError",
    provisioning_step AS "provisioningStep", created_at AS "createdAt", updated_at AS "updatedAt"
  FROM workspaces WHERE id = $1`

/** The workspace a path names, whoever asks: the principal then says what it may do there. */
export const workspaceFinder =
  (core: Core) =>
  async (id: string): Promise<Workspace | undefined> => {
    const [row] = await core.store.query<Workspace>(BY_ID, [id])
    return row
  }

/** What a signed-in person may do in a workspace: its owner holds workspace:admin. */
export const userScopes = (account: { id: string }, workspace: { ownerId: string }): WorkspaceScope | null =>
  workspace.ownerId === account.id ? 'workspace:admin' : null
