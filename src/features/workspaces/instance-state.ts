import type { Core } from '../../core'
import type { WorkspaceState } from '../../identity'

const STATE_OF = `
  SELECT state, CASE WHEN plan = 'free' THEN NULL ELSE data_plane_rps END AS rps
  FROM workspaces WHERE id = $1`

/**
 * The state of a workspace as its identity instance serves it (handed to the identity plane at
 * start-up, server.ts): it may serve only while the workspace is `active`, and at its own
 * data-plane rate only on a paid plan (a workspace back on Free has the default whatever it had
 * set). One read of one row; the plane asks at most once per MEMO_MS per instance, and at once
 * after `core.instances.changed`.
 */
export function workspaceState(core: Core): (workspaceId: string) => Promise<WorkspaceState> {
  return async (workspaceId) => {
    const [row] = await core.store.query<{ state: string; rps: number | null }>(STATE_OF, [workspaceId])
    return { active: row?.state === 'active', dataPlaneRps: row?.rps == null ? null : Number(row.rps) }
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
