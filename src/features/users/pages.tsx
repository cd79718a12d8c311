import { Elysia } from 'elysia'
import type { AuthPlugin } from '../../access/guard'
import { holdsScope } from '../../access/scopes'
import type { Core } from '../../core'
import { AppError } from '../../shared/errors'
import { defineForm, formField, sentText } from '../../shared/forms'
import { listPageQuery, startsWithSearch } from '../../shared/pagination'
import {
  HandOverLink,
  NO_STORE,
  NoMailBanner,
  type SidebarLink,
  WorkspacePage,
} from '../../shared/views/components'
import { CountAgain, PagedList, RowAdded, removeRow } from '../../shared/views/crud'
import { html, shellUser } from '../../shared/views/respond'
import { mailStateOf } from '../mail/service'
import { WorkspaceModel } from '../workspaces/model'
import type { Workspace } from '../workspaces/service'
import { UsersErrors } from './errors'
import { UserModel } from './model'
import { createUserService } from './service'
import { InviteForm, UserRow, UserTable, usersPath } from './views'

const views = { detail: { tags: ['views'] } }
const NOUN = ['user', 'users'] as const

/** The invite form reads into UserModel.invite: the rules and their messages are the API's. */
const inviteForm = defineForm(UserModel.invite, { email: formField.text, name: formField.text })

/** Dashboard pages of a workspace's users: list with search and pages, invite, delete, reset MFA. */
export function userPages(core: Core, auth: AuthPlugin<Workspace>, sidebar: SidebarLink[]) {
  const service = createUserService(core)
  const params = WorkspaceModel.params
  /** The table and its count, which follow an invitation or a delete within the page's search. */
  const listOf = (w: Workspace) => ({
    rows: 'user-rows',
    count: 'user-count',
    noun: NOUN,
    totalOf: async (q: string) => (await service.list(w, { q, limit: 1 })).total,
  })

  return new Elysia({ name: 'user-pages' })
    .use(auth)
    .get(
      '/app/workspaces/:workspace_id/users',
      async ({ principal, scopes, workspace: w, query }) => {
        const q = query.q?.trim() ?? ''
        const page = await service.list(w, { q, cursor: query.cursor })
        const mfa = await service.mfaOf(
          w,
          page.items.map((u) => u.id),
        )
        const path = usersPath(w.id)
        const mail = await mailStateOf(core, principal, w.id)
        return html(
          <WorkspacePage
            nav={sidebar}
            here="users"
            w={w}
            user={shellUser(principal)}
            heading="Users"
            title="users"
            lead="The people who sign in to this workspace's apps."
          >
            {mail.via === 'none' ? <NoMailBanner workspaceId={w.id} /> : ''}
            <div class="panel">
              <PagedList
                path={path}
                prefix="user"
                placeholder="Email or name"
                q={q}
                noun={NOUN}
                page={page}
                cursor={query.cursor}
              >
                <UserTable
                  workspaceId={w.id}
                  users={page.items}
                  mfa={mfa}
                  q={q}
                  canCopy={mail.canCopy && holdsScope(scopes, 'workspace:admin')}
                />
              </PagedList>
            </div>
            <div class="panel">
              <h2>Invite a user</h2>
              <p class="hint">
                They get an email with a link to choose their password; it works once, for 7 days.
              </p>
              <div id="user-invite">
                <InviteForm workspaceId={w.id} />
              </div>
            </div>
          </WorkspacePage>,
        )
      },
      { params, query: listPageQuery, scope: 'workspace:read', ...views },
    )
    .post(
      '/app/workspaces/:workspace_id/users/invite',
      async ({ workspace, principal, scopes, actor, body, request }) => {
        try {
          const sent = await inviteForm.submit(body, (input) => service.invite(workspace, actor, input))
          if (!sent.ok) {
            const { values, errors } = sent
            return html(<InviteForm workspaceId={workspace.id} values={values} errors={errors} />, 422)
          }
          const { via, canCopy } = await mailStateOf(core, principal, workspace.id)
          const mail = { via, canCopy: canCopy && holdsScope(scopes, 'workspace:admin') }
          const { user } = sent.result
          const found = (q: string) => startsWithSearch(q, user.email, user.name)
          return html(
            <>
              <InviteForm workspaceId={workspace.id} sent={{ email: user.email, mail }} />
              <RowAdded list={listOf(workspace)} found={found} request={request}>
                <UserRow workspaceId={workspace.id} user={user} canCopy={mail.canCopy} />
              </RowAdded>
            </>,
          )
        } catch (e) {
          // A known address is a 409 at the email field: shown there like a rule it breaks.
          if (!(e instanceof AppError) || e.code !== UsersErrors.EMAIL_TAKEN.code) throw e
          const values = { email: sentText(body, 'email'), name: sentText(body, 'name') }
          const errors = { email: `${e.message}.` }
          return html(<InviteForm workspaceId={workspace.id} values={values} errors={errors} />, 409)
        }
      },
      { params, scope: 'workspace:write', ...views },
    )
    .delete(
      '/app/workspaces/:workspace_id/users/:user_id',
      async ({ workspace, actor, params: p, request }) =>
        removeRow(service.remove(workspace, actor, p.user_id), () => (
          <CountAgain list={listOf(workspace)} request={request} />
        )),
      { params: UserModel.params, scope: 'workspace:write', ...views },
    )
    .post(
      '/app/workspaces/:workspace_id/users/:user_id/link',
      async ({ workspace, principal, actor, params: p }) =>
        html(
          <HandOverLink {...(await service.issueLink(workspace, { principal, actor }, p.user_id))} />,
          200,
          NO_STORE,
        ),
      { params: UserModel.params, scope: 'workspace:admin', ...views },
    )
    .delete(
      '/app/workspaces/:workspace_id/users/:user_id/mfa',
      async ({ workspace, actor, params: p }) => {
        await service.resetMfa(workspace, actor, p.user_id)
        return html(<span role="status">MFA reset.</span>)
      },
      { params: UserModel.params, scope: 'workspace:admin', ...views },
    )
}
