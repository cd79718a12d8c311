import { Alert } from '../../shared/views/components'
import { Layout } from '../../shared/views/hosted-layout'
import { type Account, findAccount } from '../accounts'
import type { IdentityLink } from '../broker/accounts'
import { BrokerRefused } from '../broker/model'
import type { ExternalIdp } from '../deps'
import { hostedHtml, seeOther } from '../engine/hosted'
import { PasswordField } from './components'
import { finishLogin } from './finish-login'
import type { LinkForm } from './forms'
import type { PageContext, PageRequest } from './http'
import type { InteractionDetails, InteractionLinks } from './interaction'
import { resultOf } from './links'
import { beginSecondStep, secondStep } from './mfa-interaction'
import { checkPassword } from './sign-in'

/**
 * An IdP's identity waiting to be linked to the existing account of its address, until the user
 * signs in to that account (Keycloak's first-broker-login re-authentication). Kept in the
 * interaction (`result.link`, a row of the store): the password's post may reach another node.
 * `epoch` is the account's then: a sign-out everywhere since voids the wait.
 */
interface LinkPending extends IdentityLink {
  accountId: string
  epoch: number
  idpName: string
}

const linkPendingOf = (details: InteractionDetails) =>
  resultOf<LinkPending>(details, 'link', {
    accountId: 'string',
    epoch: 'number',
    idpId: 'string',
    subject: 'string',
  })

function LinkPage(p: { pending: LinkPending; email: string; links: InteractionLinks; error?: string }) {
  return (
    <Layout title="This email already has an account">
      <h1>This email already has an account</h1>
      <p class="sub" safe>
        {`Sign in with your password (and second factor) to link ${p.pending.idpName}. From then on, ${p.pending.idpName} signs you in to this account.`}
      </p>
      <Alert kind="error" message={p.error} />
      <form method="post" action={p.links.linkUrl} autocomplete="on">
        <label for="email">Email</label>
        <input id="email" type="email" value={p.email} readonly autocomplete="username" />
        <PasswordField autofocus />
        <button type="submit">Sign in and link</button>
      </form>
      <div class="links">
        <a href={p.links.forgotUrl}>Forgot password?</a>
        <a href={`${p.links.signInUrl}?choose=1`}>Use another account</a>
      </div>
    </Layout>
  )
}

/**
 * After an IdP's sign-in that named an existing account the IdP is not trusted to vouch for
 * (`trust_email` off): nothing is linked and no one is signed in; the browser goes to the link page,
 * where the account's own password, then its second step, prove it. An account that has no
 * password to prove it with (made through another IdP) is refused with what to do instead: a
 * password set through "Forgot password?" (a mailed link) makes it provable.
 */
export async function beginLinking(
  p: PageRequest,
  account: Account,
  idp: ExternalIdp,
  subject: string,
  links: InteractionLinks,
): Promise<Response> {
  if (!p.instance.policy.allowPassword)
    throw new BrokerRefused(
      `${account.email} already has an account here, and ${idp.name} can be linked to it only with that account's password, which this workspace does not use. Sign in the way you did before, or ask an administrator.`,
      409,
    )
  if (!account.passwordHash)
    throw new BrokerRefused(
      `${account.email} already has an account here, without a password to prove it is yours. To link ${idp.name}: choose a password with “Forgot password?” on the sign-in page (we email you a link), then sign in with ${idp.name} again.`,
      409,
    )
  const link: LinkPending = {
    accountId: account.id,
    epoch: account.authEpoch,
    idpId: idp.id,
    subject,
    idpName: idp.name,
  }
  await p.interaction.result({ link }, false)
  return seeOther(links.linkUrl)
}

/**
 * `/interaction/<uid>/link`: the password of the account an IdP's identity waits to be linked to,
 * throttled as the sign-in's, then its second step as the login policy wants (the MFA step carries
 * the link); the identity is linked only when the sign-in ends. `form` is the post's (null for the page).
 */
export async function linkAccount(
  c: PageContext,
  p: PageRequest,
  details: InteractionDetails,
  links: InteractionLinks,
  form: LinkForm | null,
): Promise<Response> {
  const pending = linkPendingOf(details)
  const account = pending ? await findAccount(c.core, p.instance.id, pending.accountId) : undefined
  const offered = p.instance.policy.allowExternalIdps && p.instance.idps.some((i) => i.id === pending?.idpId)
  if (!pending || !account || account.authEpoch !== pending.epoch || !offered) {
    return seeOther(links.signInUrl)
  }
  const page = (status: number, error?: string) =>
    hostedHtml(LinkPage({ pending, email: account.email, links, error }), status)
  if (!form) return page(200)
  const checked = await checkPassword(c, p, account.email, form.password)
  if (!checked.ok) return page(checked.status, checked.error)
  const link: IdentityLink = { idpId: pending.idpId, subject: pending.subject }
  const step = await secondStep(c, p, checked.account)
  await checked.release(!step)
  if (step)
    return beginSecondStep(p, checked.account, step, links, { amr: ['pwd'], viaIdp: pending.idpName, link })
  return finishLogin(c, p, checked.account, ['pwd'], pending.idpName, link)
}
