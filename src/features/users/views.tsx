import type { MfaSummary } from '../../identity'
import type { FieldErrors, FormValues } from '../../shared/forms'
import { FieldError, HxForm, RowsTable } from '../../shared/views/components'
import { invitationOutcome, type MailState } from '../mail/service'
import { UserModel } from './model'

type UserFormField = keyof UserModel.Invite
const emptyInvite: FormValues<UserFormField> = { email: '', name: '' }

export const usersPath = (workspaceId: string) => `/app/workspaces/${workspaceId}/users`
const when = (iso: string | null) => (iso ? iso.slice(0, 16).replace('T', ' ') : '—')

/** What a badge says of a user's second factors: an authenticator app, passkeys, or none. */
const factorsText = (m: MfaSummary | undefined) => {
  const parts = [
    m?.totp ? 'authenticator app' : '',
    m?.passkeys ? `${m.passkeys} passkey${m.passkeys === 1 ? '' : 's'}` : '',
  ]
  return parts.filter(Boolean).join(', ')
}

export function UserRow({
  workspaceId,
  user,
  mfa,
  canCopy,
}: {
  workspaceId: string
  user: UserModel.Out
  mfa?: MfaSummary
  /** Offer a fresh link of an unverified user (the platform administrator, while mail goes nowhere). */
  canCopy: boolean
}) {
  const factors = factorsText(mfa)
  const path = `${usersPath(workspaceId)}/${user.id}`
  const who = user.name || user.email
  return (
    <tr id={`user-${user.id}`}>
      <td safe>{user.email}</td>
      <td safe>{user.name}</td>
      <td>
        <span class={`badge ${user.status}`}>{user.status}</span>
        {user.email_verified ? '' : <span class="hint"> unverified</span>}{' '}
        {factors ? (
          <span class="badge active" title={`Second factors: ${factors}`} safe>
            {`MFA: ${factors}`}
          </span>
        ) : (
          <span class="hint">no MFA</span>
        )}
      </td>
      <td safe>{when(user.last_sign_in_at)}</td>
      <td class="actions">
        {canCopy && !user.email_verified ? (
          <>
            <button
              type="button"
              class="btn secondary small"
              hx-post={`${path}/link`}
              hx-target={`#user-note-${user.id}`}
              hx-swap="innerHTML"
              hx-confirm={`Make a new ${user.status === 'invited' ? 'invitation' : 'verification'} link for ${who}? Any link made before stops working.`}
              aria-label={`Copy link for the ${user.status === 'invited' ? 'invitation' : 'verification'} of ${who}`}
            >
              Copy link
            </button>{' '}
          </>
        ) : (
          ''
        )}
        <button
          type="button"
          class="btn secondary small"
          hx-delete={`${path}/mfa`}
          hx-target={`#user-note-${user.id}`}
          hx-swap="innerHTML"
          hx-confirm={`Reset the second factors of ${who}? They enrol again at their next sign-in.`}
          aria-label={`Reset MFA of ${who}`}
        >
          Reset MFA
        </button>{' '}
        <button
          type="button"
          class="btn danger small"
          hx-delete={path}
          hx-target="closest tr"
          hx-swap="outerHTML swap:200ms"
          hx-confirm={`Delete ${who}? They are signed out everywhere at once.`}
          aria-label={`Delete ${who}`}
        >
          Delete
        </button>
        <span id={`user-note-${user.id}`} class="hint"></span>
      </td>
    </tr>
  )
}

export function UserTable({
  workspaceId,
  users,
  mfa,
  q,
  canCopy,
}: {
  workspaceId: string
  users: UserModel.Out[]
  mfa?: Map<string, MfaSummary>
  q: string
  canCopy: boolean
}) {
  const empty = q ? `No user's email or name starts with “${q}”.` : 'No users yet. Invite one below.'
  return (
    <RowsTable heads={['Email', 'Name', 'Status', 'Last sign-in (UTC)', '']} rows="user-rows" empty={empty}>
      {users.map((user) => (
        <UserRow workspaceId={workspaceId} user={user} mfa={mfa?.get(user.id)} canCopy={canCopy} />
      ))}
    </RowsTable>
  )
}

/** The invite form; re-rendered with inline errors (422, 409) and the values kept, or emptied with a note. */
export function InviteForm({
  workspaceId,
  values = emptyInvite,
  errors = {},
  sent,
}: {
  workspaceId: string
  values?: FormValues<UserFormField>
  errors?: FieldErrors<UserFormField>
  /** Whom an invitation just went to, and how its mail left. */
  sent?: { email: string; mail: MailState }
}) {
  return (
    <HxForm
      id="invite-form"
      action={`${usersPath(workspaceId)}/invite`}
      target="#user-invite"
      invalid={Object.keys(errors).length > 0}
      done={sent && invitationOutcome(sent.email, sent.mail)}
    >
      <label for="invite-email">Email</label>
      <input
        id="invite-email"
        name="email"
        type="email"
        required
        maxlength={String(UserModel.invite.properties.email.maxLength)}
        value={values.email}
      />
      <FieldError id="invite-email-error" message={errors.email} />
      <label for="invite-name">Name (optional)</label>
      <input id="invite-name" name="name" type="text" maxlength="200" value={values.name} />
      <FieldError id="invite-name-error" message={errors.name} />
      <p>
        <button class="btn" type="submit">
          Send invitation
        </button>
      </p>
    </HxForm>
  )
}
