import { Alert, Layout } from '../../shared/views/hosted-layout'
import {
  type Account,
  issueAccountToken,
  markEmailVerified,
  pendingVerification,
  useAccountToken,
} from '../accounts'
import { writeError } from '../errors'
import { issuerFor } from '../instances'
import { minutesText, type ThrottleEntry, throttleKey } from '../throttle'
import { DonePage } from './components'
import { linkExpired, mailWorkspace, type PageContext, type PageRequest, send } from './http'
import type { InteractionLinks } from './interaction'

const VERIFY_TTL_MS = 24 * 3600_000
/** Verification mails per address: every mail takes a slot, none is given back. */
const VERIFY_MAIL_RULE = { limit: 3, windowMs: 15 * 60_000, lockMs: 15 * 60_000 }

/**
 * Mails the link that proves the address (`verifyEmail` consumes it). Issued for an interaction,
 * the token also records which account that interaction waits on (`pendingVerification`).
 */
export async function mailVerification(
  { core, deps }: PageContext,
  account: Account,
  interactionUid?: string,
) {
  const token = await issueAccountToken(core, account, 'verify_email', VERIFY_TTL_MS, interactionUid)
  const link = `${issuerFor(core.config, account.instanceId)}/verify-email?token=${encodeURIComponent(token)}`
  await deps.sendMail(core, {
    to: account.email,
    subject: 'Verify your email address',
    text: `Confirm that ${account.email} is your email address by opening this link:\n\n${link}\n\nThe link is valid for 24 hours. If you did not create an account, ignore this email.`,
    workspaceId: mailWorkspace(account.instanceId),
  })
}

/** A verification mail for the interaction, at most a few per address: how long to wait, or 0 once sent. */
async function sendVerification(c: PageContext, account: Account, interactionUid: string): Promise<number> {
  const slot: ThrottleEntry = [throttleKey('verify', account.instanceId, account.email), VERIFY_MAIL_RULE]
  const wait = await c.throttle.reserve([slot])
  if (wait > 0) return wait
  await c.throttle.fail([slot])
  await mailVerification(c, account, interactionUid)
  return 0
}

function VerifyPendingPage(p: {
  email: string
  resendUrl: string
  signInUrl: string
  notice?: string
  error?: string
}) {
  return (
    <Layout title="Verify your email">
      <h1>Check your email</h1>
      <p class="sub">
        This app needs a verified email address. We sent a link to <strong safe>{p.email}</strong>: open it,
        then continue.
      </p>
      <Alert kind="ok" message={p.notice} />
      <Alert kind="error" message={p.error} />
      <form method="post" action={p.resendUrl}>
        <button type="submit" class="link">
          Send a new link
        </button>
      </form>
      <div class="links">
        <a href={p.signInUrl}>I have verified my email: continue</a>
      </div>
    </Layout>
  )
}

const resendUrl = (links: InteractionLinks) => `${links.signInUrl}/verify`

/**
 * Where a sign-in (or sign-up) of an unverified address ends when the login policy requires a
 * verified one: no code is issued; a link goes out by mail, and the page offers another.
 */
export async function askToVerify(c: PageContext, p: PageRequest, account: Account, links: InteractionLinks) {
  const wait = await sendVerification(c, account, links.uid)
  await send(
    p.res,
    200,
    VerifyPendingPage({
      email: account.email,
      resendUrl: resendUrl(links),
      signInUrl: links.signInUrl,
      error:
        wait > 0
          ? `We sent links recently. Check your inbox, or ask again in ${minutesText(wait)}.`
          : undefined,
    }),
  )
}

/** "Send a new link" on the verify page: for the account this interaction waits on, never another. */
export async function resendVerification(c: PageContext, p: PageRequest, links: InteractionLinks) {
  const account = await pendingVerification(c.core, p.instance.id, links.uid)
  if (!account) {
    writeError(p.res, {
      status: 400,
      title: 'Sign in again',
      message: 'This sign-in has no address waiting for verification. Sign in again.',
      link: { href: links.signInUrl, label: 'Sign in' },
    })
    return
  }
  const page = { email: account.email, resendUrl: resendUrl(links), signInUrl: links.signInUrl }
  if (account.emailVerified) {
    await send(
      p.res,
      200,
      VerifyPendingPage({ ...page, notice: 'Your email is verified. Continue to sign in.' }),
    )
    return
  }
  const wait = await sendVerification(c, account, links.uid)
  await send(
    p.res,
    wait > 0 ? 429 : 200,
    VerifyPendingPage(
      wait > 0
        ? { ...page, error: `Too many links asked for. Try again in ${minutesText(wait)}.` }
        : { ...page, notice: 'We sent a new link. It is valid for 24 hours.' },
    ),
  )
}

/** The link mailed at sign-up or by the verify page: proves the address, once. */
export async function verifyEmail({ core }: PageContext, p: PageRequest) {
  const account = await useAccountToken(core, p.instance.id, p.query.get('token') ?? '', 'verify_email')
  if (!account) {
    writeError(p.res, linkExpired('This verification link is invalid, expired or already used.'))
    return
  }
  await markEmailVerified(core, account)
  await send(
    p.res,
    200,
    DonePage({
      title: 'Email verified',
      message: `Thanks — ${account.email} is verified. You can go back to the sign-in page and continue.`,
    }),
  )
}
