import type { Core } from '../../core'
import type { ClientSource } from '../../identity'
import type { AppType } from './schema'

interface ClientRow {
  clientId: string
  name: string
  clientSecretHash: string | null
  type: AppType
  redirectUris: string
  postLogoutRedirectUris: string
  extraGrants: string
}

const BY_CLIENT_ID = `
  SELECT client_id AS "clientId", name, client_secret_hash AS "clientSecretHash", app_type AS "type",
    redirect_uris AS "redirectUris", post_logout_redirect_uris AS "postLogoutRedirectUris",
    extra_grants AS "extraGrants"
  FROM apps WHERE workspace_id = $1 AND client_id = $2`

/**
 * The apps of a workspace as the clients of its identity instance, handed to the identity plane at
 * start-up (server.ts). A token request whose client the plane has not seen lately reads here, in
 * raw SQL (the JSON columns arrive as text and are parsed here); the plane remembers what it read
 * until `core.instances` says the workspace's apps changed.
 */
export function appClientSource(core: Core): ClientSource {
  return {
    async find(workspaceId, clientId) {
      const [row] = await core.store.query<ClientRow>(BY_CLIENT_ID, [workspaceId, clientId])
      if (!row) return null
      return {
        clientId: row.clientId,
        name: row.name,
        clientSecretHash: row.clientSecretHash,
        type: row.type,
        redirectUris: JSON.parse(row.redirectUris) as string[],
        postLogoutRedirectUris: JSON.parse(row.postLogoutRedirectUris) as string[],
        extraGrants: JSON.parse(row.extraGrants) as string[],
      }
    },
  }
}
