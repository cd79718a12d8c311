import type { Core } from '../../core'
import { inJsonStrings } from '../../db/lists'
import type { Dialect } from '../../db/store'
import type { WorkspaceState } from '../../identity'

/** The statement of each store (one text for any number of workspaces). */
const STATES_OF = (dialect: Dialect) => `
  SELECT id, state, CASE WHEN plan = 'free' THEN NULL ELSE data_plane_rps END AS rps
  FROM workspaces WHERE ${inJsonStrings(dialect, 'id', '$1')}`

/**
 * The state of workspaces as their identity instances serve them (handed to the identity plane at
 * start-up, server.ts), in the order asked: each may serve only while its workspace is `active`,
 * and at its own data-plane rate only on a paid plan (a workspace back on Free has the default
 * whatever it had set). One read of their rows; the plane asks at most once per MEMO_MS per
 * instance (its busy instances' reads gathered), and at once after `core.instances.changed`.
 */
export function workspaceStates(core: Core): (workspaceIds: readonly string[]) => Promise<WorkspaceState[]> {
  const text = STATES_OF(core.store.dialect)
  return async (workspaceIds) => {
    const rows = await core.store.query<{ id: string; state: string; rps: number | null }>(text, [
      JSON.stringify(workspaceIds),
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
