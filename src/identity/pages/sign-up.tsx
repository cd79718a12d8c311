import { AppError } from '../../shared/errors'
import { Alert } from '../../shared/views/components'
import { Layout } from '../../shared/views/hosted-layout'
import { type Account, signUp as createAccount, type PasswordRule, passwordRuleFor } from '../accounts'
import { signUpsBlocked } from '../engine/extension'
import { hostedHtml } from '../engine/hosted'
import { externalStartUrl, offeredIdps } from './broker'
import {
  EmailField,
  ExternalIdpButtons,
  NameField,
  NewPasswordField,
  PASSWORDS_OFF,
  SIGNUPS_BLOCKED,
} from './components'
import { finishLogin } from './finish-login'
import type { SignUpForm } from './forms'
import { errorPage, type PageContext, type PageRequest } from './http'
import type { InteractionLinks } from './interaction'
import { beginSecondStep } from './mfa-interaction'
import { askToVerify, mailVerification } from './verify-email'

interface SignUpProps {
  action: string
  signInUrl: string
  appName: string
  rule: PasswordRule
  /** The external IdPs offered: an account made through one of them needs no password here. */
  idps: { id: string; name: string; href: string }[]
  values?: { email?: string; name?: string }
  error?: string | null
}

function SignUpPage(p: SignUpProps) {
  return (
    <Layout title="Create your account">
      <h1>Create your account</h1>
      <p class="sub">
        to continue to <strong safe>{p.appName}</strong>
      </p>
      <Alert kind="error" message={p.error} />
      <ExternalIdpButtons idps={p.idps} divider />
      <form method="post" action={p.action}>
        <NameField value={p.values?.name ?? ''} />
        <EmailField autocomplete="email" value={p.values?.email ?? ''} />
        <NewPasswordField label="Password" rule={p.rule} />
        <button type="submit">Create account</button>
      </form>
      <div class="links">
        <a href={p.signInUrl}>I already have an account</a>
      </div>
    </Layout>
  )
}

/**
 * The sign-up page of an interaction, and its post, as the login policy allows: refused (403) when
 * registration or passwords are off, or while the workspace takes no new users (its monthly active
 * users reached what its plan or spending cap allows); the password rule is the policy's; the new account is signed
 * in at once, or, when the policy requires a verified address, sent to the verify page. `form` is
 * the post's (null for the page).
 */
export async function signUp(
  c: PageContext,
  p: PageRequest,
  links: InteractionLinks,
  form: SignUpForm | null,
): Promise<Response> {
  const { policy } = p.instance
  if (!policy.allowRegistration || !policy.allowPassword) {
    return errorPage({
      status: 403,
      title: 'Sign-up is closed',
      message: policy.allowRegistration
        ? PASSWORDS_OFF
        : 'This workspace does not allow new accounts to sign up. Ask its administrator for an invitation.',
      link: { href: links.signInUrl, label: 'Back to sign in' },
    })
  }
  // Usage before anything is typed: a workspace over its monthly users takes no new ones.
  if (await signUpsBlocked(c.extensions, p.instance.id)) {
    return errorPage({
      status: 403,
      title: 'Sign-up is paused',
      message: SIGNUPS_BLOCKED,
      link: { href: links.signInUrl, label: 'Back to sign in' },
    })
  }
  const rule = passwordRuleFor(policy)
  const idps = offeredIdps(p).map((i) => ({ id: i.id, name: i.name, href: externalStartUrl(links, i) }))
  const page = { action: links.signUpUrl, signInUrl: links.signInUrl, appName: links.appName, rule, idps }
  if (!form) {
    return hostedHtml(SignUpPage(page))
  }
  const values = { email: form.email, name: form.name ?? '' }
  let account: Account
  try {
    account = await createAccount(c.core, p.instance.id, { ...values, password: form.password }, rule)
  } catch (e) {
    if (!(e instanceof AppError)) throw e
    return hostedHtml(SignUpPage({ ...page, values, error: e.message }), e.status === 409 ? 409 : 422)
  }
  if (policy.requireEmailVerification) {
    return askToVerify(c, p, account, links, ['pwd'])
  }
  await mailVerification(c, account)
  // A policy that requires MFA has the new account enrol before the sign-up signs it in.
  if (policy.mfa === 'required') return beginSecondStep(p, account, 'enrol', links)
  return finishLogin(c, p, account, ['pwd'])
}
