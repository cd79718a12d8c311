import { Elysia } from 'elysia'
import type { AuthPlugin } from '../../access/guard'
import type { Principal } from '../../access/model'
import type { Core } from '../../core'
import { issuerFor } from '../../identity'
import { defineForm, formField } from '../../shared/forms'
import { NoMailBanner, TrySignInButton, WorkspacePage } from '../../shared/views/components'
import { ADMINISTERS, Shell } from '../../shared/views/layout'
import { html, navigate, shellUser } from '../../shared/views/respond'
import { createAppService } from '../apps/service'
import { createBrandingService } from '../branding/service'
import { entriesOf, type NavEntry } from '../feature'
import { devOutboxSize, mailLeaves, routeMail } from '../mail/service'
import { createUserService } from '../users/service'
import { WorkspaceModel } from './model'
import { createWorkspaceService, type Workspace } from './service'
import { createMemberService } from './service.members'
import {
  DeleteWorkspaceForm,
  GettingStarted,
  NewWorkspaceForm,
  type StartStep,
  StatusFragment,
  WorkspaceCards,
  WorkspaceFacts,
} from './views'

const views = { detail: { tags: ['views'] } }
const params = WorkspaceModel.params
const createForm = defineForm(WorkspaceModel.create, { name: formField.text })
/** Typed exactly as the API compares it: untrimmed, so "Acme " is not "Acme". */
const deleteForm = defineForm(WorkspaceModel.remove, { confirm: { read: (raw) => raw } })

/**
 * The administrator's part of the home page: that this account administers the install (the
 * first one signed up), and the dev outbox with the mails it holds, when it is on.
 */
function AdminPanel({ outbox }: { outbox: number | null }) {
  return (
    <div class="panel" id="admin-panel">
      <p>
        <strong>{`${ADMINISTERS}.`}</strong> The first account signed up administers it: it alone reads the
        development outbox and may copy invitation and verification links when no mail can be sent.
      </p>
      {outbox === null ? (
        ''
      ) : (
        <p>
          No mail server is set: mail is kept in the{' '}
          <a id="dev-outbox-link" href="/dev/outbox" safe>{`Dev outbox (${outbox})`}</a> instead of being
          sent.
        </p>
      )}
    </div>
  )
}

/**
 * Dashboard pages of SPEC's route table for workspaces (HTMX, server-rendered). `nav` is every
 * feature's entries (the `settings` ones are the lines of its settings page); `sidebar` is drawn on
 * every workspace page.
 */
export function workspacePages(
  core: Core,
  auth: AuthPlugin<Workspace>,
  nav: NavEntry[],
  sidebar: NavEntry[],
) {
  const settings = entriesOf(nav, 'settings')

  const service = createWorkspaceService(core)
  const members = createMemberService(core)
  const apps = createAppService(core)
  const users = createUserService(core)
  const branding = createBrandingService(core)
  /**
   * The overview's checklist, read from the features' services (one read per step, in parallel).
   * "Try sign-in" ticks once any user of the workspace has signed in: a try leaves no row of its
   * own (its state is taken at the callback and expired ones are purged), and every finished try
   * is a sign-in at the hosted pages, so the sign-in is the lasting trace; a real app's first
   * sign-in proves the same. The first page of users answers both that and "a user exists".
   */
  const gettingStarted = async (w: Workspace): Promise<StartStep[]> => {
    const at = (path: string) => `/app/workspaces/${w.id}${path ? `/${path}` : ''}`
    const [appList, userPage, mail, look] = await Promise.all([
      apps.list(w),
      users.list(w, { limit: 50 }),
      routeMail(core, w.id),
      branding.get(w),
    ])
    return [
      { label: 'Create an app', href: at('apps'), done: appList.items.length > 0 },
      {
        label: 'Try sign-in',
        href: at(''),
        done: userPage.items.some((u) => u.last_sign_in_at !== null),
      },
      { label: 'Invite a user', href: at('users'), done: userPage.items.length > 0 },
      // Mail is set up when it reaches people: the workspace's server or the platform's, not the outbox.
      {
        label: 'Set up mail',
        href: at('settings/smtp'),
        done: mail.via === 'workspace' || mail.via === 'platform',
      },
      {
        label: 'Brand the sign-in pages',
        href: at('settings/branding'),
        done: Object.values(look).some((v) => v !== null),
      },
    ]
  }
  /** Whether the danger zone is shown: owners and admins hold workspace:admin (DESIGN "Who may do what"). */
  const mayAdminister = async (w: Workspace, p: Principal) => {
    const role = p.kind === 'user' ? await members.roleOf(w.id, p.account.id) : undefined
    return role === 'owner' || role === 'admin'
  }

  return new Elysia({ name: 'workspace-pages' })
    .use(auth)
    .get(
      '/app/',
      async ({ principal }) => {
        const items = await service.list(principal.account.id)
        const user = shellUser(principal)
        // The outbox holds every account's links: its size and its link are the administrator's alone.
        const outbox = user.admin ? await devOutboxSize(core) : null
        return html(
          <Shell title="Home" user={user} section="home">
            {(await mailLeaves(core, null)) ? '' : <NoMailBanner />}
            <div class="row">
              <div>
                <h1 safe>{`Welcome${user.name ? `, ${user.name}` : ''}`}</h1>
                <p class="lead">Your workspaces and what to do next.</p>
              </div>
              <a class="btn" href="/app/workspaces/new">
                New workspace
              </a>
            </div>
            {user.admin ? <AdminPanel outbox={outbox} /> : ''}
            <WorkspaceCards items={items} />
            {items.some((w) => w.state === 'active') ? (
              <div class="panel">
                <h2>Quick actions</h2>
                <ul class="links">
                  {items
                    .filter((w) => w.state === 'active')
                    .slice(0, 3)
                    .map((w) => (
                      <li>
                        <a href={`/app/workspaces/${w.id}/apps`} safe>{`Add an app to ${w.name}`}</a>
                      </li>
                    ))}
                </ul>
              </div>
            ) : (
              ''
            )}
          </Shell>,
        )
      },
      { auth: true, ...views },
    )
    .get(
      '/app/workspaces',
      async ({ principal }) => {
        const items = await service.list(principal.account.id)
        return html(
          <Shell title="Workspaces" user={shellUser(principal)} section="workspaces">
            <div class="row">
              <h1>Workspaces</h1>
              <a class="btn" href="/app/workspaces/new">
                New workspace
              </a>
            </div>
            <p class="lead">Each workspace has its own identity instance, apps and users.</p>
            <WorkspaceCards items={items} />
          </Shell>,
        )
      },
      { auth: true, ...views },
    )
    .get(
      '/app/workspaces/new',
      ({ principal }) =>
        html(
          <Shell title="New workspace" user={shellUser(principal)} section="workspaces">
            <h1>Create a workspace</h1>
            <p class="lead">We set up its identity instance right away; it is ready in a few seconds.</p>
            <NewWorkspaceForm />
          </Shell>,
        ),
      { auth: true, ...views },
    )
    .post(
      '/app/workspaces',
      async ({ principal, actor, body, request }) => {
        const created = await createForm.submit(body, ({ name }) =>
          service.create(principal.account.id, actor, name),
        )
        if (!created.ok) {
          return html(<NewWorkspaceForm name={created.values.name} error={created.errors.name} />, 422)
        }
        return navigate(request, `/app/workspaces/${created.result.id}`)
      },
      { auth: true, ...views },
    )
    .get(
      '/app/workspaces/:workspace_id',
      async ({ principal, workspace: w }) =>
        html(
          <WorkspacePage nav={sidebar} here="" w={w} user={shellUser(principal)} heading={w.name} title="">
            {w.state === 'active' ? (
              <p>
                <TrySignInButton workspaceId={w.id} />
              </p>
            ) : (
              ''
            )}
            <div class="panel">
              <StatusFragment w={w} />
            </div>
            {w.state === 'active' ? <GettingStarted steps={await gettingStarted(w)} /> : ''}
            <div class="panel">
              <WorkspaceFacts w={w} issuer={issuerFor(core.config, w.id)} />
            </div>
          </WorkspacePage>,
        ),
      { params, scope: 'workspace:read', ...views },
    )
    .get(
      '/app/partials/workspaces/:workspace_id/status',
      ({ workspace }) => html(<StatusFragment w={workspace} />),
      {
        params,
        scope: 'workspace:read',
        ...views,
      },
    )
    .post(
      '/app/workspaces/:workspace_id/retry-provisioning',
      async ({ workspace, actor }) => html(<StatusFragment w={await service.retry(workspace, actor)} />),
      { params, scope: 'workspace:admin', ...views },
    )
    .get(
      '/app/workspaces/:workspace_id/settings',
      async ({ principal, workspace: w }) =>
        html(
          <WorkspacePage
            nav={sidebar}
            here="settings"
            w={w}
            user={shellUser(principal)}
            heading="Settings"
            title="settings"
          >
            <div class="panel">
              <ul class="links">
                {settings.map((e) => (
                  <li>
                    <a href={`/app/workspaces/${w.id}/${e.path}`} safe>
                      {e.label}
                    </a>
                  </li>
                ))}
              </ul>
            </div>
            {(await mayAdminister(w, principal)) ? (
              <div class="panel danger-zone">
                <h2>Delete workspace</h2>
                <DeleteWorkspaceForm w={w} csrf={shellUser(principal).csrf} />
              </div>
            ) : (
              ''
            )}
          </WorkspacePage>,
        ),
      { params, scope: 'workspace:read', ...views },
    )
    .post(
      '/app/workspaces/:workspace_id/delete',
      async ({ principal, actor, workspace: w, body, request }) => {
        const deleted = await deleteForm.submit(body, ({ confirm }) =>
          service.remove(w, { principal, actor }, confirm),
        )
        if (!deleted.ok) {
          const { values, errors } = deleted
          const form = (
            <DeleteWorkspaceForm
              w={w}
              csrf={shellUser(principal).csrf}
              typed={values.confirm}
              error={errors.confirm}
            />
          )
          return html(form, 422)
        }
        return navigate(request, '/app/workspaces')
      },
      { params, scope: 'workspace:admin', ...views },
    )
}
