import { Elysia } from 'elysia'
import type { Core } from '../../core'
import { defineForm, formField } from '../../shared/forms'
import type { AuthPlugin } from '../../shared/plugins/auth'
import { WorkspacePage } from '../../shared/views/components'
import { html, shellUser } from '../../shared/views/respond'
import { WorkspaceModel } from '../workspaces/model'
import type { Workspace } from '../workspaces/service'
import { AppModel } from './model'
import { createAppService } from './service'
import { AppForm, AppTable, CredentialsReveal } from './views'

const views = { detail: { tags: ['views'] } }

/** The create form reads into AppModel.create: the rules and their messages are the API's. */
const createForm = defineForm(AppModel.create, {
  name: formField.text,
  app_type: formField.choice,
  redirect_uris: formField.lines,
  post_logout_redirect_uris: formField.lines,
  dev_mode: formField.checkbox,
})

/** Dashboard pages for a workspace's apps: list, create (credentials shown once), delete. */
export function appPages(core: Core, auth: AuthPlugin<Workspace>) {
  const service = createAppService(core)
  const params = WorkspaceModel.params

  const page = async (user: ReturnType<typeof shellUser>, w: Workspace) => {
    const { items } = await service.list(w)
    return (
      <WorkspacePage
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
    .delete(
      '/app/workspaces/:workspace_id/apps/:app_id',
      async ({ workspace, actor, params: p }) => {
        await service.remove(workspace, actor, p.app_id)
        // An empty 200: htmx swaps the row out (a 204 would leave it in place).
        return html('')
      },
      { params: AppModel.params, scope: 'workspace:write', ...views },
    )
}
