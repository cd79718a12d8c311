import { minutesText } from '../../limits/attempts'
import { instanceKey } from '../../limits/buckets'
import { waitOf } from '../../limits/decision'
import type { AttemptEntry } from '../../limits/limiter'
import { Alert } from '../../shared/views/components'
import { Layout } from '../../shared/views/hosted-layout'
import { type Account, findAccount, issueAccountToken, markEmailVerified, useAccountToken } from '../accounts'
import { hostedHtml } from '../engine/hosted'
import { issuerFor } from '../instances'
import { VERIFY_TTL_MS } from '../users'
import { HTMX_PATH } from './assets'
import { DonePage } from './components'
import type { Amr } from './finish-login'
import { errorPage, linkExpired, mailWorkspace, type PageContext, type PageRequest } from './http'
import type { InteractionDetails, InteractionLinks } from './interaction'
import { resultOf } from './links'

/**
 * A sign-in waiting on its address: the account whose first factor was right, its auth_epoch then
 * (a password changed since voids the wait) and the methods it used. Kept in the interaction (a
 * row of the store, `result.verify`), never in this process: the link, the poll and the button
 * may each reach another node.
 */
export interface VerifyPending {
  accountId: string
  epoch: number
  amr: Amr[]
  /** The external IdP the first step went through, if it was one. */
  viaIdp?: string
}

export const verifyPendingOf = (details: InteractionDetails) =>
  resultOf<VerifyPending>(details, 'verify', { accountId: 'string', epoch: 'number', amr: 'array' })

/**
 * Mails the link that proves the address. Issued for a sign-in, the link leads back into its
 * interaction (verify-continue.tsx), where the interaction's cookie is sent, and names the app.
 */
export async function mailVerification(
  { core, extensions }: PageContext,
  account: Account,
  signIn?: Pick<InteractionLinks, 'uid' | 'clientId'>,
) {
  const token = await issueAccountToken(core, account, 'verify_email', VERIFY_TTL_MS, signIn?.uid)
  const issuer = issuerFor(core.config, account.instanceId)
  const link = signIn
    ? `${issuer}/interaction/${signIn.uid}/verify-email?token=${encodeURIComponent(token)}&client_id=${encodeURIComponent(signIn.clientId)}`
    : `${issuer}/verify-email?token=${encodeURIComponent(token)}`
  await extensions.mail.send(core, {
    to: account.email,
    subject: 'Verify your email address',
    text: `Confirm that ${account.email} is your email address by opening this link:\n\n${link}\n\nThe link is valid for 24 hours. If you did not create an account, ignore this email.`,
    workspaceId: mailWorkspace(account.instanceId),
  })
}

/** Whether the instance's mail goes anywhere now: a page never says it sent a link that is dropped. */
export const mailLeaves = async ({ extensions }: PageContext, instanceId: string) =>
  (await extensions.mail.leaves?.(mailWorkspace(instanceId))) ?? true

/** Told instead of "we sent a link" when no mail can leave: who can help. */
export const NO_MAIL =
  'This service cannot send email yet, so no link went out. Ask its administrator for help.'

/** A verification mail for the sign-in, at most a few per address: how long to wait, or 0 once sent. */
async function sendVerification(c: PageContext, account: Account, links: InteractionLinks): Promise<number> {
  const slot: AttemptEntry = ['verifyMail', instanceKey(account.instanceId, account.email)]
  const wait = waitOf(await c.core.limiter.takeAll([slot]))
  if (wait > 0) return wait
  await c.core.limiter.fail([slot])
  await mailVerification(c, account, links)
  return 0
}

/**
 * The page a sign-in waits on. Its script asks the interaction every 2 s whether the address is
 * verified (verify-continue.tsx) and moves on by itself; the button does the same without script.
 */
function VerifyPendingPage(p: {
  email: string
  links: InteractionLinks
  htmx: string
  /** Whether the link could go out at all (no mail path: it did not). */
  mailed: boolean
  notice?: string
  error?: string
}) {
  return (
    <Layout title="Verify your email" htmx={p.htmx}>
      <h1>Check your email</h1>
      {p.mailed ? (
        <p class="sub">
          This app needs a verified email address. We sent a link to <strong safe>{p.email}</strong>: open it
          on any device, and this page continues by itself.
        </p>
      ) : (
        <p class="sub">
          This app needs a verified email address, but it cannot send email yet: we could not send you a link
          at <strong safe>{p.email}</strong>. Ask the app's administrator for your verification link; once you
          have opened it, this page continues by itself.
        </p>
      )}
      <div hx-get={p.links.verifyUrl} hx-trigger="every 2s" hx-swap="none"></div>
      <Alert kind="ok" message={p.notice} />
      <Alert kind="error" message={p.error} />
      <form method="post" action={p.links.verifyUrl}>
        <button type="submit" class="link">
          Send a new link
        </button>
      </form>
      <div class="links">
        <a href={p.links.verifyUrl}>I have verified my email: continue</a>
      </div>
    </Layout>
  )
}

/** The waiting page of a sign-in, as its request answers it. */
export const verifyPendingPage = (
  p: PageRequest,
  account: Account,
  links: InteractionLinks,
  mailed: boolean,
  message: { notice?: string; error?: string } = {},
) => VerifyPendingPage({ email: account.email, links, htmx: `${p.prefix}${HTMX_PATH}`, mailed, ...message })

/**
 * Where a sign-in (or sign-up) of an unverified address ends when the login policy requires a
 * verified one: no code is issued; the interaction records what it waits on, a link goes out by
 * mail, and the page offers another.
 */
export async function askToVerify(
  c: PageContext,
  p: PageRequest,
  account: Account,
  links: InteractionLinks,
  amr: Amr[],
  viaIdp?: string,
): Promise<Response> {
  const verify: VerifyPending = {
    accountId: account.id,
    epoch: account.authEpoch,
    amr,
    ...(viaIdp ? { viaIdp } : {}),
  }
  await p.interaction.result({ verify }, false)
  const wait = await sendVerification(c, account, links)
  return hostedHtml(
    verifyPendingPage(p, account, links, await mailLeaves(c, account.instanceId), {
      error:
        wait > 0
          ? `We sent links recently. Check your inbox, or ask again in ${minutesText(wait)}.`
          : undefined,
    }),
  )
}

/** "Send a new link" on the verify page: for the account this interaction waits on, never another. */
export async function resendVerification(
  c: PageContext,
  p: PageRequest,
  details: InteractionDetails,
  links: InteractionLinks,
): Promise<Response> {
  const pending = verifyPendingOf(details)
  const account = pending ? await findAccount(c.core, p.instance.id, pending.accountId) : undefined
  if (!account) {
    return errorPage({
      status: 400,
      title: 'Sign in again',
      message: 'This sign-in has no address waiting for verification. Sign in again.',
      link: { href: links.signInUrl, label: 'Sign in' },
    })
  }
  const mailed = await mailLeaves(c, account.instanceId)
  if (account.emailVerified) {
    return hostedHtml(verifyPendingPage(p, account, links, mailed, { notice: 'Your email is verified.' }))
  }
  const wait = await sendVerification(c, account, links)
  return hostedHtml(
    verifyPendingPage(
      p,
      account,
      links,
      mailed,
      wait > 0
        ? { error: `Too many links asked for. Try again in ${minutesText(wait)}.` }
        : mailed
          ? { notice: 'We sent a new link. It is valid for 24 hours.' }
          : { error: NO_MAIL },
    ),
    wait > 0 ? 429 : 200,
  )
}

/** The link mailed at sign-up or by the verify page: proves the address, once. */
export async function verifyEmail({ core }: PageContext, p: PageRequest): Promise<Response> {
  const account = await useAccountToken(core, p.instance.id, p.query.get('token') ?? '', 'verify_email')
  if (!account) {
    return errorPage(linkExpired('This verification link is invalid, expired or already used.'))
  }
  await markEmailVerified(core, account)
  return hostedHtml(
    DonePage({
      title: 'Email verified',
      message: `Thanks — ${account.email} is verified. You can go back to the sign-in page and continue.`,
    }),
  )
}
