import { eq, sql } from 'drizzle-orm'
import type { Core } from '../../core'
import { workspaces } from './schema'

/**
 * Whether a workspace's identity instance may serve: only while the workspace is `active`. Handed
 * to the identity plane at start-up (server.ts); it asks at most every few seconds per instance,
 * and at once after `core.instances.changed`.
 */
export function workspaceActive(core: Core): (workspaceId: string) => boolean {
  const stateOf = core.db
    .select({ state: workspaces.state })
    .from(workspaces)
    .where(eq(workspaces.id, sql.placeholder('id')))
    .prepare()
  return (workspaceId) => stateOf.get({ id: workspaceId })?.state === 'active'
}
