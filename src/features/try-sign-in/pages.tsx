import { Elysia } from 'elysia'
import type { AuthPlugin } from '../../access/guard'
import type { Principal } from '../../access/model'
import type { Core } from '../../core'
import type { IdentityPlane } from '../../identity'
import { AppError, appError } from '../../shared/errors'
import type { SidebarLink } from '../../shared/views/components'
import { html, navigate, shellUser } from '../../shared/views/respond'
import { AuthModel } from '../auth/model'
import { WorkspaceModel } from '../workspaces/model'
import type { Workspace } from '../workspaces/service'
import { TrySignInErrors } from './errors'
import { createTrySignInService } from './service'
import { TryFailedPage, TryResultPage } from './views'

const views = { detail: { tags: ['views'] } }
const params = WorkspaceModel.params
/** The claims of a person's sign-in: never cached, nor kept in history's cache. */
const NO_STORE = { 'cache-control': 'no-store' }

/** A try is bound to the dashboard session that started it: a bearer token has none. */
const sessionOf = (p: Principal): string => {
  const hash = p.kind === 'user' ? p.session?.idHash : undefined
  if (!hash) throw appError(TrySignInErrors.SESSION_REQUIRED, 403)
  return hash
}

/**
 * "Try sign-in" (the button is shared/views TrySignInButton). `workspace:read`: a viewer may run
 * it, since it changes nothing of the workspace a viewer could not cause by signing in at any of
 * its apps, and it is how a viewer sees what users see.
 */
export function trySignInPages(
  core: Core,
  auth: AuthPlugin<Workspace>,
  identity: IdentityPlane,
  sidebar: SidebarLink[],
) {
  const service = createTrySignInService(core, identity)
  return new Elysia({ name: 'try-sign-in-pages' })
    .use(auth)
    .post(
      '/app/workspaces/:workspace_id/try',
      async ({ principal, workspace, request }) =>
        navigate(request, await service.start(workspace, sessionOf(principal))),
      { params, scope: 'workspace:read', ...views },
    )
    .get(
      '/app/workspaces/:workspace_id/try/callback',
      async ({ principal, workspace: w, query }) => {
        const user = shellUser(principal)
        try {
          const result = await service.finish(w, sessionOf(principal), query)
          return html(<TryResultPage w={w} user={user} nav={sidebar} result={result} />, 200, NO_STORE)
        } catch (e) {
          if (e instanceof AppError && e.status === 400) {
            return html(<TryFailedPage w={w} user={user} nav={sidebar} message={e.message} />, 400, NO_STORE)
          }
          throw e
        }
      },
      { params, query: AuthModel.callbackQuery, scope: 'workspace:read', ...views },
    )
}
