import type { Core } from '../../core'
import { inStrings, type ListSize, listParam, listSize } from '../../db/lists'
import type { Dialect } from '../../db/store'
import type { WorkspaceState } from '../../identity'

/** The statement of each store, for one workspace or many. */
const STATES_OF = (dialect: Dialect, size: ListSize) => `
  SELECT id, state, CASE WHEN plan = 'free' THEN NULL ELSE data_plane_rps END AS rps
  FROM workspaces WHERE ${inStrings(dialect, 'id', '$1', size)}`

/**
 * The state of workspaces as their identity instances serve them (handed to the identity plane at
 * start-up, server.ts), in the order asked: each may serve only while its workspace is `active`,
 * and at its own data-plane rate only on a paid plan (a workspace back on Free has the default
 * whatever it had set). One read of their rows; the plane asks at most once per MEMO_MS per
 * instance (its busy instances' reads gathered), and at once after `core.instances.changed`.
 */
export function workspaceStates(core: Core): (workspaceIds: readonly string[]) => Promise<WorkspaceState[]> {
  const texts = { one: STATES_OF(core.store.dialect, 'one'), many: STATES_OF(core.store.dialect, 'many') }
  return async (workspaceIds) => {
    const size = listSize(workspaceIds)
    const rows = await core.store.query<{ id: string; state: string; rps: number | null }>(texts[size], [
      listParam(workspaceIds, size),
    ])
    const byId = new Map(rows.map((row) => [row.id, row]))
    return workspaceIds.map((id) => {
      const row = byId.get(id)
      return { active: row?.state === 'active', dataPlaneRps: row?.rps == null ? null : Number(row.rps) }
    })
  }
}

/** A workspace's name, for what an authenticator app lists beside its codes (the identity plane asks). */
export function workspaceName(core: Core): (workspaceId: string) => Promise<string | null> {
  return async (workspaceId) => {
    const [row] = await core.store.query<{ name: string }>('SELECT name FROM workspaces WHERE id = $1', [
      workspaceId,
    ])
    return row?.name ?? null
  }
}
