import { eq, sql } from 'drizzle-orm'
import type { Core } from '../../core'
import { preparedFor } from '../../db/prepared'
import type { WorkspaceScope } from '../../shared/plugins/auth'
import { workspaces } from './schema'
import type { Workspace } from './service'

// On every workspace-scoped request: prepared once per connection.
const queries = preparedFor((db) => ({
  byId: db
    .select()
    .from(workspaces)
    .where(eq(workspaces.id, sql.placeholder('id')))
    .prepare(),
}))

/** The workspace a path names, whoever asks: the principal then says what it may do there. */
export const workspaceFinder =
  (core: Core) =>
  (id: string): Workspace | undefined =>
    queries(core.db).byId.get({ id })

/** What a signed-in person may do in a workspace: its owner holds workspace:admin. */
export const userScopes = (account: { id: string }, workspace: { ownerId: string }): WorkspaceScope | null =>
  workspace.ownerId === account.id ? 'workspace:admin' : null
