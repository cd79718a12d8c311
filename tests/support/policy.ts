import { createLoginPolicyService } from '../../src/features/login-policy/service'
import type { Workspace } from '../../src/features/workspaces/service'
import { TEST_ACTOR } from './core'
import type { TestServer } from './server'

/**
 * Sets a workspace's login policy for a test through the feature's service, as PATCH
 * `/v1/workspaces/{id}/login-policy` does: the row changes, and `core.instances.changed` makes the
 * next request rebuild the instance with it.
 */
export async function setPolicy(
  server: TestServer,
  workspaceId: string,
  patch: { mfa?: 'off' | 'optional' | 'required' },
) {
  await createLoginPolicyService(server.core).update(
    { id: workspaceId, state: 'active' } as Workspace,
    TEST_ACTOR,
    patch,
  )
}
