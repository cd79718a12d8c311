import type { LoginPolicy } from '../../src/identity'
import type { TestServer } from './server'

/**
 * Sets a workspace's login policy for a test.
 *
 * INTERIM (issue 20, until the login-policy feature is merged): the policy is written into the
 * instance the server's pool built, which is what the hosted pages read (`p.instance.policy`); the
 * rows of the login-policy feature do not exist yet. After the merge this helper should PATCH
 * `/v1/workspaces/{id}/login-policy` as the owner (the route calls `core.instances.changed`, so the
 * next request rebuilds the instance with it). Only the pool's copy changes here: a test using it
 * must not evict the instance afterwards.
 */
export async function setPolicy(server: TestServer, workspaceId: string, patch: Partial<LoginPolicy>) {
  const instance = await server.identity.pool.get(workspaceId)
  if (!instance) throw new Error(`no identity instance for workspace ${workspaceId}`)
  Object.assign(instance.policy, patch)
}
