import { Elysia, t } from 'elysia'
import type { AuthPlugin } from '../../access/guard'
import type { Principal } from '../../access/model'
import type { Core } from '../../core'
import { AppError, appError, type ErrorCode } from '../../shared/errors'
import { defineForm, formField, sentText } from '../../shared/forms'
import {
  HandOverLink,
  NO_STORE,
  NoMailBanner,
  type SidebarLink,
  WorkspacePage,
} from '../../shared/views/components'
import { removeRow, rowRemoved } from '../../shared/views/crud'
import { html, navigate, shellUser } from '../../shared/views/respond'
import { mailStateOf } from '../mail/service'
import { MemberErrors } from './errors'
import { MemberModel, WorkspaceModel } from './model'
import type { Workspace } from './service'
import { createInvitationService, invitationIsFor } from './service.invitation'
import { createMemberService } from './service.members'
import {
  InvitationAccept,
  InvitationExpired,
  InvitationInvalid,
  InvitationOtherAccount,
  InvitationSignIn,
} from './views.invitation'
import { MemberRow, MembersSection, ROLES, type Viewer } from './views.members'

const views = { detail: { tags: ['views'] } }
const params = WorkspaceModel.params

/** The forms read into the API's models: the rules and their messages are the API's. */
const addForm = defineForm(MemberModel.add, { email: formField.text, role: formField.choice })
const roleForm = defineForm(MemberModel.update, { role: formField.choice })

/** A refusal the page shows where it happened (beside the field, in the row) rather than as an error page. */
const refused = (e: unknown, codes: ErrorCode[]): e is AppError =>
  e instanceof AppError && codes.some((c) => c.code === e.code)

/** Settings → Members: the list, adding by email, changing roles, removing, cancelling invitations. */
export function memberPages(core: Core, auth: AuthPlugin<Workspace>, sidebar: SidebarLink[]) {
  const service = createMemberService(core)

  /** What the page offers follows the role as it is now (the guard only said "may read"). */
  const viewerOf = async (w: Workspace, p: Principal): Promise<Viewer> => {
    const accountId = p.kind === 'user' ? p.account.id : p.id
    return { accountId, role: (await service.roleOf(w.id, accountId)) ?? 'viewer' }
  }

  type Form = Parameters<typeof MembersSection>[0]['form']
  /** The table and the add form, as they are now: the page's body, and what an add redraws. */
  const section = async (w: Workspace, viewer: Viewer, principal: Principal, form?: Form) => (
    <MembersSection
      workspaceId={w.id}
      items={await service.list(w)}
      viewer={viewer}
      now={core.clock.now()}
      mail={await mailStateOf(core, principal, w.id)}
      form={form}
    />
  )

  /** The row of a member as it is now, with why a change was refused. */
  const rowWithError = async (
    w: Workspace,
    viewer: Viewer,
    accountId: string,
    message: string,
    status: number,
  ) => {
    const member = await service.get(w, accountId)
    if (!member) throw appError(MemberErrors.MEMBER_NOT_FOUND, 404)
    return html(<MemberRow workspaceId={w.id} member={member} viewer={viewer} error={message} />, status)
  }

  return new Elysia({ name: 'member-pages' })
    .use(auth)
    .get(
      '/app/workspaces/:workspace_id/settings/members',
      async ({ principal, workspace: w }) => {
        const viewer = await viewerOf(w, principal)
        const mail = await mailStateOf(core, principal, w.id)
        return html(
          <WorkspacePage
            nav={sidebar}
            here="settings/members"
            w={w}
            user={shellUser(principal)}
            heading="Members"
            title="members"
            lead="The people who manage this workspace, and what each may do."
          >
            {mail.via === 'none' ? <NoMailBanner workspaceId={w.id} /> : ''}
            <MembersSection
              workspaceId={w.id}
              items={await service.list(w)}
              viewer={viewer}
              now={core.clock.now()}
              mail={mail}
            />
            <div class="panel">
              <h2>Roles</h2>
              <dl class="facts">
                {ROLES.map(([role, does]) => (
                  <>
                    <dt>{role}</dt>
                    <dd safe>{does}</dd>
                  </>
                ))}
              </dl>
            </div>
          </WorkspacePage>,
        )
      },
      { params, scope: 'workspace:read', ...views },
    )
    .post(
      '/app/workspaces/:workspace_id/settings/members',
      async ({ principal, actor, workspace: w, body }) => {
        const viewer = await viewerOf(w, principal)
        try {
          const sent = await addForm.submit(body, (input) => service.add(w, { principal, actor }, input))
          if (!sent.ok)
            return html(
              await section(w, viewer, principal, { values: sent.values, errors: sent.errors }),
              422,
            )
          return html(await section(w, viewer, principal, { done: sent.result }))
        } catch (e) {
          if (
            !refused(e, [
              MemberErrors.MEMBER_EXISTS,
              MemberErrors.INVITATION_PENDING,
              MemberErrors.OWNER_ONLY,
            ])
          )
            throw e
          const values = { email: sentText(body, 'email'), role: sentText(body, 'role') }
          const field = e.code === MemberErrors.OWNER_ONLY.code ? 'role' : 'email'
          return html(
            await section(w, viewer, principal, { values, errors: { [field]: `${e.message}.` } }),
            e.status,
          )
        }
      },
      { params, scope: 'workspace:admin', ...views },
    )
    .patch(
      '/app/workspaces/:workspace_id/settings/members/:account_id',
      async ({ principal, actor, workspace: w, params: p, body }) => {
        const viewer = await viewerOf(w, principal)
        try {
          const sent = await roleForm.submit(body, ({ role }) =>
            service.changeRole(w, { principal, actor }, p.account_id, role),
          )
          if (!sent.ok) return rowWithError(w, viewer, p.account_id, sent.errors.role ?? '', 422)
          // Your own role changed: the page redraws with what you may do now.
          const self: Record<string, string> =
            p.account_id === viewer.accountId ? { 'hx-refresh': 'true' } : {}
          return html(<MemberRow workspaceId={w.id} member={sent.result} viewer={viewer} />, 200, self)
        } catch (e) {
          if (!refused(e, [MemberErrors.LAST_OWNER, MemberErrors.OWNER_ONLY])) throw e
          return rowWithError(w, viewer, p.account_id, e.message, e.status)
        }
      },
      { params: MemberModel.params, scope: 'workspace:admin', ...views },
    )
    .delete(
      '/app/workspaces/:workspace_id/settings/members/:account_id',
      async ({ principal, actor, workspace: w, params: p }) => {
        const viewer = await viewerOf(w, principal)
        try {
          await service.remove(w, { principal, actor }, p.account_id)
        } catch (e) {
          if (!refused(e, [MemberErrors.LAST_OWNER, MemberErrors.OWNER_ONLY])) throw e
          return rowWithError(w, viewer, p.account_id, e.message, e.status)
        }
        // Leaving: nothing of this workspace is yours to see any more.
        if (p.account_id === viewer.accountId) return html('', 200, { 'hx-redirect': '/app/workspaces' })
        return rowRemoved()
      },
      { params: MemberModel.params, scope: 'workspace:admin', ...views },
    )
    .post(
      '/app/workspaces/:workspace_id/settings/members/invitations/:invitation_id/link',
      async ({ principal, actor, workspace: w, params: p }) => {
        const issued = await service.issueInvitationLink(w, { principal, actor }, p.invitation_id)
        return html(<HandOverLink {...issued} />, 200, NO_STORE)
      },
      { params: MemberModel.invitationParams, scope: 'workspace:admin', ...views },
    )
    .delete(
      '/app/workspaces/:workspace_id/settings/members/invitations/:invitation_id',
      async ({ principal, actor, workspace: w, params: p }) =>
        removeRow(service.cancelInvitation(w, { principal, actor }, p.invitation_id)),
      { params: MemberModel.invitationParams, scope: 'workspace:admin', ...views },
    )
}

/**
 * The page an invitation mail links to, and its Accept button. Signed out, it offers the platform's
 * sign-in (and sign-up) and comes back; signed in, it joins only the account of the invited address.
 */
export function invitationPages(core: Core, auth: AuthPlugin<Workspace>) {
  const service = createInvitationService(core)
  const token = t.String({ maxLength: 200 })

  /** The page for `token` as `principal` sees it; `error` is why accepting just failed. */
  async function invitationPage(value: string, principal: Principal | null, error?: AppError) {
    const person = principal?.kind === 'user' ? principal : null
    const user = person ? shellUser(person) : null
    const open = await service.open(value)
    const headers = { 'cache-control': 'no-store' }
    if (!open) return html(<InvitationInvalid user={user} />, 404, headers)
    if (open.expired) return html(<InvitationExpired open={open} user={user} />, 410, headers)
    if (!person || !user) return html(<InvitationSignIn open={open} token={value} />, 200, headers)
    if (!invitationIsFor(open.invitation, person.account)) {
      const page = <InvitationOtherAccount open={open} user={user} email={person.account.email} />
      return html(page, 403, headers)
    }
    const page = <InvitationAccept open={open} user={user} token={value} error={error?.message} />
    return html(page, error?.status ?? 200, headers)
  }

  return new Elysia({ name: 'invitation-pages' })
    .use(auth)
    .get(
      '/app/invitation',
      async ({ request, cookie, principalOf, query }) =>
        invitationPage(query.token ?? '', await principalOf({ request, cookie, body: undefined })),
      { query: t.Object({ token: t.Optional(token) }), ...views },
    )
    .post(
      '/app/invitation',
      async ({ principal, actor, body, request }) => {
        try {
          const workspaceId = await service.accept(body.token, { principal, actor })
          return navigate(request, `/app/workspaces/${workspaceId}`)
        } catch (e) {
          if (
            !refused(e, [
              MemberErrors.INVITATION_INVALID,
              MemberErrors.INVITATION_EXPIRED,
              MemberErrors.INVITATION_OTHER_ACCOUNT,
              MemberErrors.EMAIL_NOT_VERIFIED,
            ])
          )
            throw e
          return invitationPage(body.token, principal, e)
        }
      },
      { auth: true, body: t.Object({ token }), ...views },
    )
}
