import { and, eq } from 'drizzle-orm'
import type { Actor } from '../../access/model'
import { fieldChanges } from '../../audit/record'
import type { Core } from '../../core'
import type { Conn } from '../../db/store'
import { issuerFor } from '../../identity'
import { isoTime } from '../../shared/clock'
import { randomToken, sha256Hex } from '../../shared/crypto'
import { displayName } from '../../shared/display-names'
import { appError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import type { Workspace } from '../workspaces/service'
import { AppsErrors } from './errors'
import type { AppModel } from './model'
import { checkRedirectUris } from './redirect-uris'
import { apps } from './schema'

type AppRow = typeof apps.$inferSelect

/** What a listing shows of an app. */
type ListedApp = Pick<
  AppRow,
  'id' | 'name' | 'clientId' | 'appType' | 'redirectUris' | 'postLogoutRedirectUris' | 'devMode'
>

export const appOut = (a: ListedApp) => ({
  id: a.id,
  name: a.name,
  client_id: a.clientId,
  app_type: a.appType,
  redirect_uris: a.redirectUris,
  post_logout_redirect_uris: a.postLogoutRedirectUris,
  dev_mode: a.devMode,
})

type AppView = ReturnType<typeof appOut>

/** What the audit log shows of an app: never its secret (only a digest is stored anyway). */
const AUDITED = [
  'name',
  'client_id',
  'app_type',
  'redirect_uris',
  'post_logout_redirect_uris',
  'dev_mode',
] as const satisfies readonly (keyof AppView)[]

interface ListRow {
  id: string
  name: string
  clientId: string
  appType: AppRow['appType']
  redirectUris: string
  postLogoutRedirectUris: string
  devMode: unknown
}

// Every apps page and API listing: raw SQL, the JSON columns parsed and the boolean coerced here.
const LIST = `
  SELECT id, name, client_id AS "clientId", app_type AS "appType", redirect_uris AS "redirectUris",
    post_logout_redirect_uris AS "postLogoutRedirectUris", dev_mode AS "devMode"
  FROM apps WHERE workspace_id = $1
  ORDER BY created_at, id`

const listed = (r: ListRow): ListedApp => ({
  id: r.id,
  name: r.name,
  clientId: r.clientId,
  appType: r.appType,
  redirectUris: JSON.parse(r.redirectUris) as string[],
  postLogoutRedirectUris: JSON.parse(r.postLogoutRedirectUris) as string[],
  devMode: Boolean(r.devMode),
})

const HOUR_MS = 3_600_000

/** The app of the workspace, or 404. */
async function appOf(conn: Pick<Conn, 'db'>, workspaceId: string, appId: string): Promise<AppRow> {
  const [row] = await conn.db
    .select()
    .from(apps)
    .where(and(eq(apps.workspaceId, workspaceId), eq(apps.id, appId)))
  if (!row) throw appError(AppsErrors.APP_NOT_FOUND, 404)
  return row
}

/** An app's changes one at a time: each reads what the last one wrote. */
async function changing(tx: Conn, workspaceId: string, appId: string): Promise<AppRow> {
  await tx.serialize(`app:${appId}`)
  return appOf(tx, workspaceId, appId)
}

/** OIDC applications of a workspace's Default project; every query is scoped by workspace. */
export function createAppService(core: Core) {
  /** Every node's instance of the workspace forgets its clients: the next request reads them again. */
  const changed = (workspace: Workspace) => core.instances.changed(workspace.id)
  return {
    async list(workspace: Workspace) {
      const rows = await core.store.query<ListRow>(LIST, [workspace.id])
      const items = rows.map((r) => appOut(listed(r)))
      return { items, total: items.length }
    },

    /**
     * Creates the client (`app.created`): the app as listed, and its credentials; a web app's
     * secret is in them this once (stored as a SHA-256 digest, and never in the audit entry).
     */
    async create(workspace: Workspace, actor: Actor, input: AppModel.Create) {
      if (workspace.state === 'deleting') throw appError(AppsErrors.WORKSPACE_DELETING, 409)
      const name = displayName(input.name)
      const appType = input.app_type ?? 'web'
      const devMode = input.dev_mode ?? false
      checkRedirectUris('redirect_uris', input.redirect_uris, appType, devMode)
      checkRedirectUris('post_logout_redirect_uris', input.post_logout_redirect_uris ?? [], appType, devMode)
      const now = core.clock.now()
      const clientSecret = appType === 'web' ? randomToken(32) : null
      const row = await core.store.tx(async (tx) => {
        const [created] = await tx.db
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
        if (!created) throw new Error('the app was not stored')
        await core.audit(
          {
            workspaceId: workspace.id,
            actor,
            action: 'app.created',
            target: { type: 'app', id: created.id },
            changes: fieldChanges(null, appOut(created), AUDITED),
          },
          { tx },
        )
        return created
      })
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

    async get(workspace: Workspace, appId: string): Promise<AppView> {
      return appOut(await appOf(core.store, workspace.id, appId))
    },

    /**
     * Changes what AppCreate set (`app.updated`, the fields that changed): the lists are checked
     * against the type and the development mode they will have together, so turning development
     * mode off is refused while an http://localhost URI stays. Takes effect at the next request on
     * every node; not a webhook event.
     */
    async update(
      workspace: Workspace,
      actor: Actor,
      appId: string,
      input: AppModel.Update,
    ): Promise<AppView> {
      if (workspace.state === 'deleting') throw appError(AppsErrors.WORKSPACE_DELETING, 409)
      const name = input.name === undefined ? undefined : displayName(input.name)
      const result = await core.store.tx(async (tx) => {
        const before = await changing(tx, workspace.id, appId)
        if (input.app_type !== undefined && input.app_type !== before.appType)
          throw appError(AppsErrors.APP_TYPE_FIXED, 422, { loc: ['body', 'app_type'] })
        const devMode = input.dev_mode ?? before.devMode
        const redirectUris = input.redirect_uris ?? before.redirectUris
        const postLogoutRedirectUris = input.post_logout_redirect_uris ?? before.postLogoutRedirectUris
        checkRedirectUris('redirect_uris', redirectUris, before.appType, devMode)
        checkRedirectUris('post_logout_redirect_uris', postLogoutRedirectUris, before.appType, devMode)
        const after = { ...before, name: name ?? before.name, devMode, redirectUris, postLogoutRedirectUris }
        const changes = fieldChanges(appOut(before), appOut(after), AUDITED)
        if (Object.keys(changes).length === 0) return { app: appOut(before), changed: false }
        await tx.db
          .update(apps)
          .set({ name: after.name, devMode, redirectUris, postLogoutRedirectUris })
          .where(eq(apps.id, before.id))
        await core.audit(
          {
            workspaceId: workspace.id,
            actor,
            action: 'app.updated',
            target: { type: 'app', id: before.id },
            changes,
          },
          { tx },
        )
        return { app: appOut(after), changed: true }
      })
      if (result.changed) await changed(workspace)
      return result.app
    },

    /**
     * A new secret for a web app (`app.secret_rotated`), shown this once. The previous one is
     * refused at once, or accepted beside the new one for `graceHours` (up to 24) so that a
     * deployment can switch without downtime; a secret older than the previous one is refused
     * at once either way.
     */
    async rotateSecret(workspace: Workspace, actor: Actor, appId: string, graceHours = 0) {
      if (workspace.state === 'deleting') throw appError(AppsErrors.WORKSPACE_DELETING, 409)
      const clientSecret = randomToken(32)
      const now = core.clock.now()
      const graceUntil = graceHours > 0 ? now + graceHours * HOUR_MS : null
      const row = await core.store.tx(async (tx) => {
        const before = await changing(tx, workspace.id, appId)
        if (before.appType !== 'web') throw appError(AppsErrors.NO_CLIENT_SECRET, 409)
        await tx.db
          .update(apps)
          .set({
            clientSecretHash: sha256Hex(clientSecret),
            previousSecretHash: graceUntil === null ? null : before.clientSecretHash,
            previousSecretExpiresAt: graceUntil,
          })
          .where(eq(apps.id, before.id))
        await core.audit(
          {
            workspaceId: workspace.id,
            actor,
            action: 'app.secret_rotated',
            target: { type: 'app', id: before.id },
            changes: {
              client_secret: { to: '(changed)' },
              previous_secret_expires_at: { to: graceUntil === null ? null : isoTime(graceUntil) },
            },
          },
          { tx },
        )
        return before
      })
      await changed(workspace)
      return {
        client_id: row.clientId,
        client_secret: clientSecret,
        previous_secret_expires_at: graceUntil === null ? null : isoTime(graceUntil),
      }
    },

    /**
     * Idempotent: deleting an app that is already gone is not an error (SPEC), and records nothing;
     * deleting one records `app.deleted`.
     */
    async remove(workspace: Workspace, actor: Actor, appId: string): Promise<void> {
      await core.store.tx(async (tx) => {
        const [gone] = await tx.db
          .delete(apps)
          .where(and(eq(apps.workspaceId, workspace.id), eq(apps.id, appId)))
          .returning()
        if (!gone) return
        await core.audit(
          {
            workspaceId: workspace.id,
            actor,
            action: 'app.deleted',
            target: { type: 'app', id: gone.id },
            changes: fieldChanges(appOut(gone), null, ['name', 'client_id', 'app_type']),
          },
          { tx },
        )
      })
      // The instance forgets the client now: its next token request is refused.
      await changed(workspace)
    },
  }
}

/** The apps' teardown step of a workspace deletion (its instance is served no more). */
export async function deleteWorkspaceApps(core: Pick<Core, 'db'>, workspaceId: string): Promise<void> {
  await core.db.delete(apps).where(eq(apps.workspaceId, workspaceId))
}
