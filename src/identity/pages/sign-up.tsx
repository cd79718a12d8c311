import { AppError } from '../../shared/errors'
import { Alert, Layout } from '../../shared/views/hosted-layout'
import { type Account, signUp as createAccount, issueAccountToken } from '../accounts'
import { issuerFor } from '../instances'
import { EmailField, NewPasswordField } from './components'
import { finishLogin } from './finish-login'
import { mailWorkspace, type PageContext, type PageRequest, readForm, send } from './http'
import type { InteractionLinks } from './interaction'
import { beginSecondStep } from './mfa-interaction'

const VERIFY_TTL_MS = 24 * 3600_000

interface SignUpProps {
  action: string
  signInUrl: string
  appName: string
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
      <form method="post" action={p.action}>
        <label for="name">Name</label>
        <input
          id="name"
          name="name"
          type="text"
          autocomplete="name"
          maxlength="200"
          value={p.values?.name ?? ''}
        />
        <EmailField autocomplete="email" value={p.values?.email ?? ''} />
        <NewPasswordField label="Password" />
        <button type="submit">Create account</button>
      </form>
      <div class="links">
        <a href={p.signInUrl}>I already have an account</a>
      </div>
    </Layout>
  )
}

/** Mails the link that proves the address (verify-email.ts consumes it). */
async function mailVerification({ core, deps }: PageContext, account: Account) {
  const token = await issueAccountToken(core, account, 'verify_email', VERIFY_TTL_MS)
  const link = `${issuerFor(core.config, account.instanceId)}/verify-email?token=${encodeURIComponent(token)}`
  await deps.sendMail(core, {
    to: account.email,
    subject: 'Verify your email address',
    text: `Confirm that ${account.email} is your email address by opening this link:\n\n${link}\n\nThe link is valid for 24 hours. If you did not create an account, ignore this email.`,
    workspaceId: mailWorkspace(account.instanceId),
  })
}

/** The sign-up page of an interaction, and its post: the new account is signed in at once. */
export async function signUp(c: PageContext, p: PageRequest, links: InteractionLinks) {
  const page = { action: links.signUpUrl, signInUrl: links.signInUrl, appName: links.appName }
  if (p.req.method !== 'POST') {
    await send(p.res, 200, SignUpPage(page))
    return
  }
  const form = await readForm(p.req)
  const values = { email: form.get('email') ?? '', name: form.get('name') ?? '' }
  try {
    const account = await createAccount(c.core, p.instance.id, {
      ...values,
      password: form.get('password') ?? '',
    })
    await mailVerification(c, account)
    // A policy that requires MFA has the new account enrol before the sign-up signs it in.
    if (p.instance.policy.mfa === 'required') return beginSecondStep(p, account, 'enrol', links)
    await finishLogin(c, p, account, ['pwd'])
  } catch (e) {
    if (!(e instanceof AppError)) throw e
    await send(p.res, e.status === 409 ? 409 : 422, SignUpPage({ ...page, values, error: e.message }))
  }
}
