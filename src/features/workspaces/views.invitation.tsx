import type { PropsWithChildren } from '@kitajs/html'
import { Shell, type ShellUser } from '../../shared/views/layout'
import type { OpenInvitation } from './service.invitation'
import { invitationPath } from './service.members'

/** The invitation page's shell: a person who is signed out sees it too. */
function InvitationShell({
  title,
  user,
  children,
}: PropsWithChildren<{ title: string; user: ShellUser | null }>) {
  return (
    <Shell title={title} user={user}>
      <div class="panel">{children}</div>
    </Shell>
  )
}

/** Signing in (or up) on the platform comes back to the invitation. */
const signInPath = (token: string) => `/v1/auth/login?next=${encodeURIComponent(invitationPath(token))}`

/** A link that opens nothing any more: used, cancelled, its workspace deleted, or never issued. */
export function InvitationInvalid({ user }: { user: ShellUser | null }) {
  return (
    <InvitationShell title="Invitation not valid" user={user}>
      <h1>This invitation link is not valid</h1>
      <p>
        It was used already, cancelled, or its workspace was deleted. Ask an administrator of the workspace to
        invite you again.
      </p>
      <p>
        <a href="/app/">Go to your dashboard</a>
      </p>
    </InvitationShell>
  )
}

export function InvitationExpired({ open, user }: { open: OpenInvitation; user: ShellUser | null }) {
  return (
    <InvitationShell title="Invitation expired" user={user}>
      <h1>This invitation has expired</h1>
      <p safe>
        {`An invitation link works for 7 days. Ask an administrator of ${open.workspace.name} to invite you again.`}
      </p>
      <p>
        <a href="/app/">Go to your dashboard</a>
      </p>
    </InvitationShell>
  )
}

function Invited({ open }: { open: OpenInvitation }) {
  return (
    <>
      <h1 safe>{`Join ${open.workspace.name}`}</h1>
      <p safe>{`You are invited to the workspace ${open.workspace.name} as ${open.invitation.role}.`}</p>
    </>
  )
}

/** Signed out: signing in (or up, from the sign-in page) comes back here. */
export function InvitationSignIn({ open, token }: { open: OpenInvitation; token: string }) {
  return (
    <InvitationShell title="Invitation" user={null}>
      <Invited open={open} />
      <p safe>{`Sign in with ${open.invitation.email} to accept, or create an account with that address.`}</p>
      <p>
        <a class="btn" href={signInPath(token)}>
          Sign in or create an account
        </a>
      </p>
    </InvitationShell>
  )
}

/** Signed in as another address: the invitation goes only to the account of the one it was sent to. */
export function InvitationOtherAccount({
  open,
  user,
  email,
}: {
  open: OpenInvitation
  user: ShellUser
  email: string
}) {
  return (
    <InvitationShell title="Invitation for another address" user={user}>
      <h1>This invitation is for another address</h1>
      <p safe>
        {`It was sent to ${open.invitation.email}, and you are signed in as ${email}. Sign out, then open the link from the email again and sign in (or create an account) with ${open.invitation.email}.`}
      </p>
    </InvitationShell>
  )
}

/** Signed in as the invited address: the workspace, the role, and the button that joins. */
export function InvitationAccept({
  open,
  user,
  token,
  error,
}: {
  open: OpenInvitation
  user: ShellUser
  token: string
  error?: string
}) {
  return (
    <InvitationShell title="Invitation" user={user}>
      <Invited open={open} />
      {error ? (
        <p class="field-error" role="alert" safe>
          {error}
        </p>
      ) : (
        ''
      )}
      <form method="post" action="/app/invitation">
        <input type="hidden" name="_csrf" value={user.csrf} />
        <input type="hidden" name="token" value={token} />
        <button class="btn" type="submit">
          Accept invitation
        </button>{' '}
        <a href="/app/">Not now</a>
      </form>
    </InvitationShell>
  )
}
