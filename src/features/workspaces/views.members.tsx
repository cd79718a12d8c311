import type { FieldErrors, FormValues } from '../../shared/forms'
import { FieldError, HxForm } from '../../shared/views/components'
import { invitationOutcome, type MailState } from '../mail/service'
import { MemberModel } from './model'
import type { MemberRole } from './schema'

type AddField = keyof MemberModel.Add

export const ROLES: [MemberRole, string][] = [
  ['owner', 'Everything, including who is an owner'],
  ['admin', 'Everything else: members, settings, machine keys, deleting the workspace'],
  ['developer', 'Create and change apps, identity providers, branding and webhooks'],
  ['viewer', 'Read only'],
]

/** Who is looking at the page: what they may change follows their role. */
export interface Viewer {
  accountId: string
  role: MemberRole
}

const canManage = (v: Viewer) => v.role === 'owner' || v.role === 'admin'
/** Owners alone touch the owner role: an admin sees an owner's row as it is. */
const canChange = (v: Viewer, m: MemberModel.Out) =>
  canManage(v) && (v.role === 'owner' || m.role !== 'owner')

const membersPath = (workspaceId: string) => `/app/workspaces/${workspaceId}/settings/members`
const day = (iso: string) => iso.slice(0, 10)

function RoleSelect({ path, member, viewer }: { path: string; member: MemberModel.Out; viewer: Viewer }) {
  const who = member.name || member.email
  return (
    <select
      name="role"
      hx-patch={path}
      hx-trigger="change"
      hx-target="closest tr"
      hx-swap="outerHTML"
      aria-label={`Role of ${who}`}
    >
      {ROLES.filter(([role]) => role !== 'owner' || viewer.role === 'owner').map(([role]) => (
        <option value={role} selected={role === member.role}>
          {role}
        </option>
      ))}
    </select>
  )
}

/** A member's row; `error` says why the last change was refused (the row shows the role as it is). */
export function MemberRow({
  workspaceId,
  member,
  viewer,
  error,
}: {
  workspaceId: string
  member: MemberModel.Out
  viewer: Viewer
  error?: string
}) {
  const path = `${membersPath(workspaceId)}/${member.account_id}`
  const who = member.name || member.email
  const me = member.account_id === viewer.accountId
  const editable = canChange(viewer, member)
  return (
    <tr id={`member-${member.account_id}`}>
      <td>
        <span safe>{member.email}</span>
        {me ? <span class="hint"> (you)</span> : ''}
      </td>
      <td safe>{member.name}</td>
      <td>{editable ? <RoleSelect path={path} member={member} viewer={viewer} /> : member.role}</td>
      <td>
        <span class="badge active">active</span>
      </td>
      <td safe>{day(member.created_at)}</td>
      <td class="actions">
        {editable ? (
          <button
            type="button"
            class="btn danger small"
            hx-delete={path}
            hx-target="closest tr"
            hx-swap="outerHTML swap:200ms"
            hx-confirm={
              me
                ? 'Leave this workspace? You lose access to it at once.'
                : `Remove ${who} from this workspace? They lose access at once.`
            }
            aria-label={me ? 'Leave this workspace' : `Remove ${who}`}
          >
            {me ? 'Leave' : 'Remove'}
          </button>
        ) : (
          ''
        )}
        {error ? (
          <p class="field-error" role="alert" safe>
            {error}
          </p>
        ) : (
          ''
        )}
      </td>
    </tr>
  )
}

/** A pending invitation's row: an expired one stays listed until cancelled or sent again. */
function InvitationRow({
  workspaceId,
  member,
  viewer,
  now,
  canCopy,
}: {
  workspaceId: string
  member: MemberModel.Out
  viewer: Viewer
  now: number
  canCopy: boolean
}) {
  const expired = Date.parse(member.expires_at ?? '') <= now
  const path = `${membersPath(workspaceId)}/invitations/${member.invitation_id}`
  return (
    <tr id={`invitation-${member.invitation_id}`}>
      <td safe>{member.email}</td>
      <td></td>
      <td>{member.role}</td>
      <td>
        {expired ? (
          <span class="badge expired">expired</span>
        ) : (
          <span class="badge invited" title={`The link works until ${member.expires_at} UTC`}>
            invited
          </span>
        )}
      </td>
      <td safe>{day(member.created_at)}</td>
      <td class="actions">
        {canCopy && canManage(viewer) ? (
          <>
            <button
              type="button"
              class="btn secondary small"
              hx-post={`${path}/link`}
              hx-target={`#invitation-link-${member.invitation_id}`}
              hx-confirm={`Make a new link for ${member.email}? Any link made before stops working.`}
              aria-label={`Copy link for the invitation of ${member.email}`}
            >
              Copy link
            </button>{' '}
          </>
        ) : (
          ''
        )}
        {canManage(viewer) ? (
          <button
            type="button"
            class="btn secondary small"
            hx-delete={path}
            hx-target="closest tr"
            hx-swap="outerHTML swap:200ms"
            hx-confirm={`Cancel the invitation of ${member.email}? Its link stops working.`}
            aria-label={`Cancel invitation of ${member.email}`}
          >
            Cancel invitation
          </button>
        ) : (
          ''
        )}
        <div id={`invitation-link-${member.invitation_id}`}></div>
      </td>
    </tr>
  )
}

export function MemberTable({
  workspaceId,
  items,
  viewer,
  now,
  mail,
}: {
  workspaceId: string
  items: MemberModel.Out[]
  viewer: Viewer
  now: number
  mail: MailState
}) {
  return (
    <table>
      <thead>
        <tr>
          <th>Email</th>
          <th>Name</th>
          <th>Role</th>
          <th>Status</th>
          <th>Since</th>
          <th></th>
        </tr>
      </thead>
      <tbody id="member-rows">
        {items.map((m) =>
          m.status === 'active' ? (
            <MemberRow workspaceId={workspaceId} member={m} viewer={viewer} />
          ) : (
            <InvitationRow
              workspaceId={workspaceId}
              member={m}
              viewer={viewer}
              now={now}
              canCopy={mail.canCopy}
            />
          ),
        )}
      </tbody>
    </table>
  )
}

const emptyAdd: FormValues<AddField> = { email: '', role: 'developer' }

/** What an add did: a member now, or an invitation whose mail went out, or not. */
const addedText = (done: MemberModel.Out, mail: MailState) =>
  done.status === 'active'
    ? `${done.email} is now a member (${done.role}).`
    : invitationOutcome(done.email, mail)

/** The add form; re-rendered with inline errors (422, 409, 403) and the values kept, or emptied with a note. */
export function AddMemberForm({
  workspaceId,
  viewer,
  values = emptyAdd,
  errors = {},
  done,
  mail,
}: {
  workspaceId: string
  viewer: Viewer
  values?: FormValues<AddField>
  errors?: FieldErrors<AddField>
  done?: MemberModel.Out
  mail: MailState
}) {
  const action = membersPath(workspaceId)
  return (
    <HxForm
      id="member-add"
      action={action}
      target="#members"
      swap="outerHTML"
      invalid={Object.keys(errors).length > 0}
      done={done ? addedText(done, mail) : undefined}
    >
      <label for="member-email">Email</label>
      <input
        id="member-email"
        name="email"
        type="email"
        required
        maxlength={String(MemberModel.add.properties.email.maxLength)}
        value={values.email}
        aria-describedby={errors.email ? 'member-email-error' : undefined}
      />
      <FieldError id="member-email-error" message={errors.email} />
      <label for="member-role">Role</label>
      <select id="member-role" name="role">
        {ROLES.filter(([role]) => role !== 'owner' || viewer.role === 'owner').map(([role, does]) => (
          <option value={role} selected={role === values.role} safe>
            {`${role}: ${does}`}
          </option>
        ))}
      </select>
      <FieldError id="member-role-error" message={errors.role} />
      <p>
        <button class="btn" type="submit">
          Add member
        </button>
      </p>
    </HxForm>
  )
}

/** The page's body: the table, and for owners and admins the add form (re-rendered together after an add). */
export function MembersSection({
  workspaceId,
  items,
  viewer,
  now,
  mail,
  form,
}: {
  workspaceId: string
  items: MemberModel.Out[]
  viewer: Viewer
  now: number
  mail: MailState
  form?: { values?: FormValues<AddField>; errors?: FieldErrors<AddField>; done?: MemberModel.Out }
}) {
  return (
    <div id="members">
      <div class="panel">
        <MemberTable workspaceId={workspaceId} items={items} viewer={viewer} now={now} mail={mail} />
      </div>
      {canManage(viewer) ? (
        <div class="panel">
          <h2>Add a member</h2>
          <p class="hint">
            Someone with a Gatehouse account joins at once. Anyone else gets an email invitation; its link
            works once, for 7 days.
          </p>
          <AddMemberForm workspaceId={workspaceId} viewer={viewer} mail={mail} {...form} />
        </div>
      ) : (
        ''
      )}
    </div>
  )
}
