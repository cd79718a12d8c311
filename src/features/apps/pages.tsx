import { Elysia } from 'elysia'
import type { Core } from '../../core'
import { AppError } from '../../shared/errors'
import { nameProblem } from '../../shared/names'
import type { AuthPlugin } from '../../shared/plugins/auth'
import { Shell } from '../../shared/views/layout'
import { html, shellUser } from '../../shared/views/respond'
import { WorkspaceModel } from '../workspaces/model'
import type { Workspace } from '../workspaces/service'
import { WorkspaceCrumb } from '../workspaces/views'
import { AppModel } from './model'
import { type appOut, createAppService } from './service'
import { AppForm, type AppFormValues, AppTable, CredentialsReveal } from './views'

const views = { detail: { tags: ['views'] } }
const lines = (v: string) =>
  v
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean)

type Errors = Partial<Record<keyof AppFormValues, string>>
const URI_KIND = { redirect_uris: 'redirect URIs', post_logout_redirect_uris: 'post-logout URIs' }

/** The same rules as AppCreate, phrased for a form and shown next to each field. */
function formErrors(v: AppFormValues): Errors {
  const errors: Errors = {}
  const name = v.name.trim()
  if (!name) errors.name = 'Enter a name.'
  else {
    const problem = v.name.length > 200 ? 'Use at most 200 characters' : nameProblem(name)
    if (problem) errors.name = `${problem}.`
  }
  const redirects = lines(v.redirect_uris)
  if (redirects.length === 0) errors.redirect_uris = 'Add at least one redirect URI.'
  const tooLong = (field: 'redirect_uris' | 'post_logout_redirect_uris') => {
    const all = lines(v[field])
    const i = all.findIndex((u) => u.length > 2083)
    if (i >= 0) errors[field] = `Line ${i + 1}: use at most 2083 characters.`
    if (all.length > AppModel.MAX_URIS) errors[field] = `Use at most ${AppModel.MAX_URIS} ${URI_KIND[field]}.`
  }
  tooLong('redirect_uris')
  tooLong('post_logout_redirect_uris')
  return errors
}

/** Dashboard pages for a workspace's apps: list, create (credentials shown once), delete. */
export function appPages(core: Core, auth: AuthPlugin<Workspace>) {
  const service = createAppService(core)
  const params = WorkspaceModel.params

  const page = (user: ReturnType<typeof shellUser>, w: Workspace) => (
    <Shell title={`${w.name} apps`} user={user} section="workspaces">
      <WorkspaceCrumb w={w} />
      <h1>Applications</h1>
      <p class="lead">OpenID Connect clients that sign users in with this workspace.</p>
      <div class="panel">
        <AppTable workspaceId={w.id} apps={service.list(w).items} />
      </div>
      <div class="panel">
        <h2>Create an app</h2>
        <div id="app-create">
          <AppForm workspaceId={w.id} />
        </div>
      </div>
    </Shell>
  )

  return new Elysia({ name: 'app-pages' })
    .use(auth)
    .get(
      '/app/workspaces/:workspace_id/apps',
      ({ principal, workspace }) => html(page(shellUser(principal), workspace)),
      {
        params,
        scope: 'workspace:read',
        ...views,
      },
    )
    .post(
      '/app/workspaces/:workspace_id/apps',
      ({ workspace, body }) => {
        const b = (body ?? {}) as Record<string, unknown>
        const values: AppFormValues = {
          name: String(b.name ?? ''),
          app_type: ['web', 'spa', 'native'].includes(String(b.app_type)) ? String(b.app_type) : 'web',
          redirect_uris: String(b.redirect_uris ?? ''),
          post_logout_redirect_uris: String(b.post_logout_redirect_uris ?? ''),
          dev_mode: b.dev_mode === 'true' || b.dev_mode === 'on',
        }
        const errors = formErrors(values)
        if (Object.keys(errors).length)
          return html(<AppForm workspaceId={workspace.id} values={values} errors={errors} />, 422)
        try {
          const creds = service.create(workspace, {
            name: values.name,
            app_type: values.app_type as AppModel.Create['app_type'],
            redirect_uris: lines(values.redirect_uris),
            post_logout_redirect_uris: lines(values.post_logout_redirect_uris),
            dev_mode: values.dev_mode,
          })
          const row = service.list(workspace).items.find((a) => a.id === creds.id) as ReturnType<
            typeof appOut
          >
          return html(<CredentialsReveal workspaceId={workspace.id} creds={creds} row={row} />)
        } catch (e) {
          if (!(e instanceof AppError) || e.status !== 422) throw e
          const [, field, index] = e.loc as [string, keyof AppFormValues, number]
          const fieldErrors = { [field]: `Line ${index + 1}: ${e.message}` }
          return html(<AppForm workspaceId={workspace.id} values={values} errors={fieldErrors} />, 422)
        }
      },
      { params, scope: 'workspace:write', ...views },
    )
    .delete(
      '/app/workspaces/:workspace_id/apps/:app_id',
      ({ workspace, params: p }) => {
        service.remove(workspace, p.app_id)
        // An empty 200: htmx swaps the row out (a 204 would leave it in place).
        return html('')
      },
      { params: AppModel.params, scope: 'workspace:write', ...views },
    )
}
