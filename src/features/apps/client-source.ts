import type { Core } from '../../core'
import { inStrings, type ListSize, listParam, listSize } from '../../db/lists'
import type { Dialect } from '../../db/store'
import type { ClientSource } from '../../identity'
import type { AppType } from './schema'

interface ClientRow {
  workspaceId: string
  clientId: string
  name: string
  clientSecretHash: string | null
  type: AppType
  redirectUris: string
  postLogoutRedirectUris: string
  extraGrants: string
}

/** The statement of each store, for one client or many. */
const BY_CLIENT_IDS = (dialect: Dialect, size: ListSize) => `
  SELECT workspace_id AS "workspaceId", client_id AS "clientId", name, client_secret_hash AS "clientSecretHash", app_type AS "type",
    redirect_uris AS "redirectUris", post_logout_redirect_uris AS "postLogoutRedirectUris",
    extra_grants AS "extraGrants"
  FROM apps WHERE ${inStrings(dialect, 'client_id', '$1', size)} AND ${inStrings(dialect, 'workspace_id', '$2', size)}`

/**
 * The apps of workspaces as the clients of their identity instances, handed to the identity plane at
 * start-up (server.ts). A token request whose client the plane has not seen lately reads here (and
 * a node's busy instances read theirs again, gathered), in raw SQL (the JSON columns arrive as text
 * and are parsed here); the plane remembers what it read until `core.instances` says the
 * workspace's apps changed. Client ids are unique across workspaces (apps_client_id_idx): rows are
 * looked up by id among the asking workspaces', and one belongs to the instance that asked for it
 * only if its workspace is that one.
 */
export function appClientSource(core: Core): ClientSource {
  const texts = {
    one: BY_CLIENT_IDS(core.store.dialect, 'one'),
    many: BY_CLIENT_IDS(core.store.dialect, 'many'),
  }
  return {
    async find(wanted) {
      // One statement for both lists: several clients of one workspace still go as two lists.
      const size = listSize(wanted)
      const workspaces = [...new Set(wanted.map((w) => w.instanceId))]
      const rows = await core.store.query<ClientRow>(texts[size], [
        listParam(
          wanted.map((w) => w.clientId),
          size,
        ),
        listParam(workspaces, size),
      ])
      const byId = new Map(rows.map((row) => [row.clientId, row]))
      return wanted.map(({ instanceId, clientId }) => {
        const row = byId.get(clientId)
        if (!row || row.workspaceId !== instanceId) return null
        return {
          clientId: row.clientId,
          name: row.name,
          clientSecretHash: row.clientSecretHash,
          type: row.type,
          redirectUris: JSON.parse(row.redirectUris) as string[],
          postLogoutRedirectUris: JSON.parse(row.postLogoutRedirectUris) as string[],
          extraGrants: JSON.parse(row.extraGrants) as string[],
        }
      })
    },
  }
}
