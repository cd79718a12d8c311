import type { Core } from '../../core'

const STATE_OF = 'SELECT state FROM workspaces WHERE id = $1'

/**
 * Whether a workspace's identity instance may serve: only while the workspace is `active`. Handed
 * to the identity plane at start-up (server.ts); it asks at most every few seconds per instance,
 * and at once after `core.instances.changed`.
 */
export function workspaceActive(core: Core): (workspaceId: string) => Promise<boolean> {
  return async (workspaceId) => {
    const [row] = await core.store.query<{ state: string }>(STATE_OF, [workspaceId])
    return row?.state === 'active'
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

/**
 * A workspace's own identity-plane rate, or null for the default (the identity plane asks). Only on
 * a paid plan: a workspace back on Free has the default whatever it had set.
 */
export function workspaceDataPlaneRps(core: Core): (workspaceId: string) => Promise<number | null> {
  return async (workspaceId) => {
    const [row] = await core.store.query<{ rps: number | null }>(
      "SELECT CASE WHEN plan = 'free' THEN NULL ELSE data_plane_rps END AS rps FROM workspaces WHERE id = $1",
      [workspaceId],
    )
    return row?.rps == null ? null : Number(row.rps)
  }
}
