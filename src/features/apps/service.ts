import { and, asc, eq, sql } from 'drizzle-orm'
import type { Core } from '../../core'
import { issuerFor } from '../../identity'
import { randomToken, sha256Hex } from '../../shared/crypto'
import { appError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import { displayName } from '../../shared/names'
import type { Workspace } from '../workspaces/service'
import { AppsErrors } from './errors'
import type { AppModel } from './model'
import { checkRedirectUris } from './redirect-uris'
import { apps } from './schema'

type AppRow = typeof apps.$inferSelect

export const appOut = (a: AppRow) => ({
  id: a.id,
  name: a.name,
  client_id: a.clientId,
  app_type: a.appType,
  redirect_uris: a.redirectUris,
  post_logout_redirect_uris: a.postLogoutRedirectUris,
  dev_mode: a.devMode,
})

/** OIDC applications of a workspace's Default project; every query is scoped by workspace. */
export function createAppService(core: Core) {
  const listQuery = core.db
    .select()
    .from(apps)
    .where(eq(apps.workspaceId, sql.placeholder('workspaceId')))
    .orderBy(asc(apps.createdAt), asc(apps.id))
    .prepare()
  return {
    list(workspace: Workspace) {
      const items = listQuery.all({ workspaceId: workspace.id }).map(appOut)
      return { items, total: items.length }
    },

    /**
     * Creates the client: the app as listed, and its credentials; a web app's secret is in them
     * this once (stored as a SHA-256 digest).
     */
    create(workspace: Workspace, input: AppModel.Create) {
      if (workspace.state === 'deleting') throw appError(AppsErrors.WORKSPACE_DELETING, 409)
      const name = displayName(input.name)
      const appType = input.app_type ?? 'web'
      const devMode = input.dev_mode ?? false
      checkRedirectUris('redirect_uris', input.redirect_uris, appType, devMode)
      checkRedirectUris('post_logout_redirect_uris', input.post_logout_redirect_uris ?? [], appType, devMode)
      const now = core.clock.now()
      const clientSecret = appType === 'web' ? randomToken(32) : null
      const row = core.db
        .insert(apps)
        .values({
          id: newId('app', now),
          workspaceId: workspace.id,
          name,
          clientId: randomToken(18),
          clientSecretHash: clientSecret ? sha256Hex(clientSecret) : null,
          appType,
          redirectUris: input.redirect_uris,
          postLogoutRedirectUris: input.post_logout_redirect_uris ?? [],
          devMode,
          createdAt: now,
        })
        .returning()
        .get()
      const issuer = issuerFor(core.config, workspace.id)
      return {
        app: appOut(row),
        credentials: {
          id: row.id,
          name: row.name,
          client_id: row.clientId,
          client_secret: clientSecret,
          app_type: appType,
          issuer,
          discovery_url: `${issuer}/.well-known/openid-configuration`,
        },
      }
    },

    /** Idempotent: deleting an app that is already gone is not an error (SPEC). */
    remove(workspace: Workspace, appId: string): void {
      core.db
        .delete(apps)
        .where(and(eq(apps.workspaceId, workspace.id), eq(apps.id, appId)))
        .run()
      // The instance forgets the client now: its next token request is refused.
      core.instances.changed(workspace.id)
    },
  }
}

export type AppService = ReturnType<typeof createAppService>

/** The apps' teardown step of a workspace deletion (its instance is served no more). */
export function deleteWorkspaceApps(core: Core, workspaceId: string): void {
  core.db.delete(apps).where(eq(apps.workspaceId, workspaceId)).run()
}
