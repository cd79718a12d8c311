import { AppError } from '../../shared/errors'
import { Alert } from '../../shared/views/components'
import { Layout } from '../../shared/views/hosted-layout'
import { type PasswordRule, passwordRuleFor } from '../accounts'
import { hostedHtml } from '../engine/hosted'
import { acceptInvitation, findInvitation } from '../users'
import { DonePage, NameField, NewPasswordField, PASSWORDS_OFF_ERROR } from './components'
import type { AcceptInviteForm } from './forms'
import { errorPage, linkExpired, type PageContext, type PageRequest } from './http'

const INVALID = 'This invitation link is invalid, expired or already used. Ask for a new invitation.'

interface AcceptProps {
  action: string
  token: string
  email: string
  name: string
  /** The instance's password rule: the one shown by the field is the one enforced. */
  rule: PasswordRule
  error?: string | null
}

function AcceptInvitePage(p: AcceptProps) {
  return (
    <Layout title="Accept your invitation">
      <h1>Accept your invitation</h1>
      <p class="sub">
        Choose a password for <strong safe>{p.email}</strong>
      </p>
      <Alert kind="error" message={p.error} />
      <form method="post" action={p.action}>
        <input type="hidden" name="token" value={p.token} />
        <NameField value={p.name} />
        <NewPasswordField label="Password" rule={p.rule} />
        <button type="submit">Accept and set password</button>
      </form>
    </Layout>
  )
}

/**
 * The link of an invitation mail (the users feature's invite): the invited user chooses a password,
 * under the instance's password rule; the address is proved by the mail. Once: the token is used
 * up by a successful acceptance, and refused after 7 days. Ends on a done page: the user then signs
 * in from the application as anyone else does. `form` is the post's (null for the page).
 */
export async function acceptInvite(
  { core }: PageContext,
  p: PageRequest,
  form: AcceptInviteForm | null,
): Promise<Response> {
  // Where passwords are off, an invitation is accepted through an external provider, never with one.
  if (!p.instance.policy.allowPassword) return errorPage(PASSWORDS_OFF_ERROR)
  const action = `${p.prefix}/accept-invite`
  const rule = passwordRuleFor(p.instance.policy)
  if (!form) {
    const token = p.query.get('token') ?? ''
    const invited = await findInvitation(core, p.instance.id, token)
    if (!invited) {
      return errorPage(linkExpired(INVALID))
    }
    return hostedHtml(AcceptInvitePage({ action, token, email: invited.email, name: invited.name, rule }))
  }
  const { token: posted, password } = form
  const name = form.name ?? ''
  const invited = await findInvitation(core, p.instance.id, posted)
  if (!invited) {
    return errorPage(linkExpired(INVALID))
  }
  const again = (error: string) =>
    hostedHtml(AcceptInvitePage({ action, token: posted, email: invited.email, name, rule, error }), 422)
  let account: Awaited<ReturnType<typeof acceptInvitation>>
  try {
    account = await acceptInvitation(core, p.instance.id, posted, { password, name }, rule)
  } catch (e) {
    if (!(e instanceof AppError) || e.status !== 422) throw e
    return again(e.message)
  }
  if (!account) {
    return errorPage(linkExpired(INVALID))
  }
  return hostedHtml(
    DonePage({
      title: 'Invitation accepted',
      message: `Your account ${account.email} is ready. You can now sign in with your password.`,
    }),
  )
}
