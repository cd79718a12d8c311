import type { Core } from '../../core'

/** A workspace's name, for what an authenticator app lists beside its codes (the identity plane asks). */
export function workspaceName(core: Core): (workspaceId: string) => Promise<string | null> {
  return async (workspaceId) => {
    const [row] = await core.store.query<{ name: string }>('SELECT name FROM workspaces WHERE id = $1', [
      workspaceId,
    ])
    return row?.name ?? null
  }
}
