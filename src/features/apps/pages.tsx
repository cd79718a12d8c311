import { Elysia } from 'elysia'
import type { AuthPlugin } from '../../access/guard'
import { holdsScope } from '../../access/scopes'
import type { Core } from '../../core'
import { issuerFor } from '../../identity'
import { defineForm, formField } from '../../shared/forms'
import { type SidebarLink, WorkspacePage } from '../../shared/views/components'
import { removeRow } from '../../shared/views/crud'
import { html, navigate, shellUser } from '../../shared/views/respond'
import { WorkspaceModel } from '../workspaces/model'
import type { Workspace } from '../workspaces/service'
import { APP_HEADING, AppSection, type AppSectionProps } from './app-page'
import { AppModel } from './model'
import { createAppService } from './service'
import { AppForm, AppTable, appsPath, CredentialsReveal } from './views'

const views = { detail: { tags: ['views'] } }
/** The app page carries a secret once (its rotation's reveal): never kept by a cache. */
const noStore = { 'cache-control': 'no-store' }

/** The create form reads into AppModel.create: the rules and their messages are the API's. */
const createForm = defineForm(AppModel.create, {
  name: formField.text,
  app_type: formField.choice,
  redirect_uris: formField.lines,
  post_logout_redirect_uris: formField.lines,
  dev_mode: formField.checkbox,
})

/** The settings form of an app's page reads into AppModel.update: every field, as the page shows them. */
const settingsForm = defineForm(AppModel.update, {
  name: formField.text,
  app_type: formField.choice,
  redirect_uris: formField.lines,
  post_logout_redirect_uris: formField.lines,
  dev_mode: formField.checkbox,
})

const rotateForm = defineForm(AppModel.rotate, { grace_hours: formField.integer })

/**
 * Dashboard pages for a workspace's apps: list, create (credentials shown once), delete, and each
 * app's page (settings, secret rotation with its one-time reveal, quickstarts, delete).
 */
export function appPages(core: Core, auth: AuthPlugin<Workspace>, sidebar: SidebarLink[]) {
  const service = createAppService(core)
  const params = WorkspaceModel.params

  const page = async (user: ReturnType<typeof shellUser>, w: Workspace) => {
    const { items } = await service.list(w)
    return (
      <WorkspacePage
        nav={sidebar}
        here="apps"
        w={w}
        user={user}
        heading="Applications"
        title="apps"
        lead="OpenID Connect clients that sign users in with this workspace."
      >
        <div class="panel">
          <AppTable workspaceId={w.id} apps={items} />
        </div>
        <div class="panel">
          <h2>Create an app</h2>
          <div id="app-create">
            <AppForm workspaceId={w.id} />
          </div>
        </div>
      </WorkspacePage>
    )
  }

  /** What the app page's section is drawn with: the app as it is now, with what the action did. */
  const sectionProps = async (
    w: Workspace,
    appId: string,
    scopes: readonly string[],
    extra: Partial<AppSectionProps> = {},
  ): Promise<AppSectionProps> => ({
    workspaceId: w.id,
    app: await service.get(w, appId),
    issuer: issuerFor(core.config, w.id),
    canWrite: holdsScope(scopes, 'workspace:write'),
    ...extra,
  })
  const section = async (...args: Parameters<typeof sectionProps>) => (
    <AppSection {...(await sectionProps(...args))} />
  )

  return new Elysia({ name: 'app-pages' })
    .use(auth)
    .get(
      '/app/workspaces/:workspace_id/apps',
      async ({ principal, workspace }) => html(await page(shellUser(principal), workspace)),
      {
        params,
        scope: 'workspace:read',
        ...views,
      },
    )
    .post(
      '/app/workspaces/:workspace_id/apps',
      async ({ workspace, actor, body }) => {
        const created = await createForm.submit(body, (input) => service.create(workspace, actor, input))
        if (!created.ok) {
          const { values, errors } = created
          return html(<AppForm workspaceId={workspace.id} values={values} errors={errors} />, 422)
        }
        const { app, credentials } = created.result
        return html(<CredentialsReveal workspaceId={workspace.id} creds={credentials} row={app} />)
      },
      { params, scope: 'workspace:write', ...views },
    )
    .get(
      '/app/workspaces/:workspace_id/apps/:app_id',
      async ({ principal, scopes, workspace: w, params: p }) => {
        const props = await sectionProps(w, p.app_id, scopes)
        return html(
          <WorkspacePage
            nav={sidebar}
            here="apps/app"
            w={w}
            user={shellUser(principal)}
            heading={props.app.name}
            headingId={APP_HEADING}
            title={props.app.name}
            lead={<a href={appsPath(w.id)}>All apps</a>}
          >
            <AppSection {...props} />
          </WorkspacePage>,
          200,
          noStore,
        )
      },
      { params: AppModel.params, scope: 'workspace:read', ...views },
    )
    .post(
      '/app/workspaces/:workspace_id/apps/:app_id',
      async ({ workspace: w, actor, scopes, params: p, body }) => {
        const saved = await settingsForm.submit(body, (input) => service.update(w, actor, p.app_id, input))
        if (!saved.ok) {
          const form = { values: saved.values, errors: saved.errors }
          return html(await section(w, p.app_id, scopes, { form }), 422, noStore)
        }
        return html(
          await section(w, p.app_id, scopes, {
            done: 'Saved. The new settings apply from the next sign-in.',
            renamed: true,
          }),
          200,
          noStore,
        )
      },
      { params: AppModel.params, scope: 'workspace:write', ...views },
    )
    .post(
      '/app/workspaces/:workspace_id/apps/:app_id/rotate-secret',
      async ({ workspace: w, actor, scopes, params: p, body }) => {
        const rotated = await rotateForm.submit(body, (input) =>
          service.rotateSecret(w, actor, p.app_id, input.grace_hours),
        )
        if (!rotated.ok)
          return html(await section(w, p.app_id, scopes, { error: rotated.errors.grace_hours }), 422, noStore)
        return html(await section(w, p.app_id, scopes, { rotated: rotated.result }), 200, noStore)
      },
      { params: AppModel.params, scope: 'workspace:write', ...views },
    )
    .post(
      '/app/workspaces/:workspace_id/apps/:app_id/delete',
      async ({ request, workspace: w, actor, params: p }) => {
        await service.remove(w, actor, p.app_id)
        return navigate(request, appsPath(w.id))
      },
      { params: AppModel.params, scope: 'workspace:write', ...views },
    )
    .delete(
      '/app/workspaces/:workspace_id/apps/:app_id',
      async ({ workspace, actor, params: p }) => removeRow(service.remove(workspace, actor, p.app_id)),
      { params: AppModel.params, scope: 'workspace:write', ...views },
    )
}
