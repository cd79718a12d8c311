import { and, eq, sql } from 'drizzle-orm'
import type { Core } from '../../core'
import type { ClientSource } from '../../identity'
import { apps } from './schema'

/**
 * The apps of a workspace as the clients of its identity instance, handed to the identity plane at
 * start-up (server.ts). A token request whose client the plane has not seen lately reads here, so
 * the statement is prepared once; the plane remembers what it read until `core.instances` says
 * the workspace's apps changed.
 */
export function appClientSource(core: Core): ClientSource {
  const byClientId = core.db
    .select({
      clientId: apps.clientId,
      name: apps.name,
      clientSecretHash: apps.clientSecretHash,
      type: apps.appType,
      redirectUris: apps.redirectUris,
      postLogoutRedirectUris: apps.postLogoutRedirectUris,
      extraGrants: apps.extraGrants,
    })
    .from(apps)
    .where(
      and(
        eq(apps.workspaceId, sql.placeholder('workspaceId')),
        eq(apps.clientId, sql.placeholder('clientId')),
      ),
    )
    .prepare()
  return {
    find: async (workspaceId, clientId) => byClientId.get({ workspaceId, clientId }) ?? null,
  }
}
