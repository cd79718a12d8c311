import { Alert } from '../../shared/views/components'
import { Layout } from '../../shared/views/hosted-layout'
import { findAccount, markEmailVerified, useAccountToken } from '../accounts'
import { assertsMfa } from '../broker/model'
import { hostedHtml, seeOther } from '../engine/hosted'
import type { IdentityError } from '../errors'
import { claimInteraction, interactionClaimed } from '../interaction-claims'
import { DonePage } from './components'
import { finishLogin } from './finish-login'
import { resetWaitOf } from './forgot-password'
import { errorPage, linkExpired, type PageContext, type PageRequest } from './http'
import type { InteractionDetails, InteractionLinks } from './interaction'
import { beginSecondStep, secondStep } from './mfa-interaction'
import { mailLeaves, verifyPendingOf, verifyPendingPage } from './verify-email'

// How a sign-in waiting on a mailed link (its address, verify-email.tsx; a new password,
// reset-password.tsx) goes on: in the tab that started it, which polls the interaction and goes on
// by itself once the link was opened, wherever. A mail client opens the link in a new tab of the
// same browser, and an SPA keeps its PKCE verifier and state in the starting tab's sessionStorage:
// the code must come back there, so the link's tab only offers to finish instead.

/** A request of htmx (the waiting page's poll), as opposed to the browser loading a page. */
const polled = (p: PageRequest) => (p.headers.get('hx-request') ?? undefined) === 'true'

/** Has htmx load `location` as a page (the poll's answer whenever there is more than "not yet"). */
const loadPage = (location: string) =>
  new Response(null, { status: 200, headers: { 'hx-redirect': location, 'cache-control': 'no-store' } })

/**
 * Where someone whose sign-in is gone starts again: the site of the app `clientId` names (the
 * URL's `client_id` unless given: a client of this instance), by the origin of its first web
 * redirect URI, never an address taken from the request. None for an unknown or native app.
 */
async function signInAgain(
  p: PageRequest,
  clientId = p.query.get('client_id'),
): Promise<IdentityError['link']> {
  const client = clientId ? await p.instance.provider.Client.find(clientId) : undefined
  if (client?.applicationType !== 'web') return undefined
  const site = client.redirectUris?.find((uri) => /^https?:\/\//.test(uri))
  return site ? { href: `${new URL(site).origin}/`, label: 'Sign in' } : undefined
}

/**
 * Whether this browser started interaction `uid`: it sends the interaction's signed cookie, which
 * oidc-provider scoped to the interaction's path and leaves in place after the sign-in ends.
 */
export function holdsInteraction(p: PageRequest, uid: string): boolean {
  return p.interaction.cookie('interaction') === uid
}

/** The page of a tab whose sign-in another tab (or window) went on with. */
const continuedElsewhere = async (p: PageRequest, clientId?: string | null) =>
  hostedHtml(
    DonePage({
      title: 'Continued in another tab',
      message: 'This sign-in went on in another tab or window. You can close this one.',
      link: await signInAgain(p, clientId),
    }),
    409,
  )

/**
 * `GET …/verify`: the sign-in goes on once its address is verified (or a new password was saved
 * from its reset link in this browser). Polled (htmx, with the interaction's cookie), it answers
 * "not yet" with an empty 204, and anything else by sending the page here. Loaded as a page (so, by
 * the button without script, or by the link's "Continue here instead"), the first tab to come ends
 * the sign-in as a right password would have: through the second step the account or the policy
 * asks for; a later one is told where it went.
 */
export async function continueVerified(
  c: PageContext,
  p: PageRequest,
  details: InteractionDetails,
  links: InteractionLinks,
): Promise<Response> {
  const pending = verifyPendingOf(details)
  const found = pending ? await findAccount(c.core, p.instance.id, pending.accountId) : undefined
  // Gone, or its password changed (a reset signs out everywhere): the sign-in starts over.
  const account = found && found.authEpoch === pending?.epoch ? found : undefined
  const verified = account && (account.emailVerified || !p.instance.policy.requireEmailVerification)
  if (polled(p)) {
    const reset = pending ? null : resetWaitOf(details)
    if ((account && !verified) || reset === 'asked') {
      return new Response(null, { status: 204, headers: { 'cache-control': 'no-store' } })
    }
    // A new password saved in another browser: this one signs in with it (reset-password.tsx).
    return loadPage(reset === 'done' ? links.signInUrl : links.verifyUrl)
  }
  if (!pending || !account) {
    return seeOther(links.signInUrl)
  }
  if (!verified) {
    const mailed = await mailLeaves(c, account.instanceId)
    const error = mailed
      ? 'Your email is not verified yet. Open the link we sent, then continue.'
      : 'Your email is not verified yet. Open the link the administrator gives you, then continue.'
    return hostedHtml(verifyPendingPage(p, account, links, mailed, { error }))
  }
  // The tab that polls and the link's "Continue here instead" may both come here: one goes on.
  if (!(await claimInteraction(c.core, p.instance, details.uid, details.exp)))
    return continuedElsewhere(p, links.clientId)
  // A passkey alone ends a sign-in; a password leads to the second step, as it does at sign-in, and
  // so does an external IdP that did not assert a second factor of its own.
  const external = pending.viaIdp ? { amr: pending.amr, viaIdp: pending.viaIdp } : undefined
  const needsStep = external ? !assertsMfa(external.amr) : pending.amr.includes('pwd')
  const step = needsStep ? await secondStep(c, p, account) : null
  if (step) return beginSecondStep(p, account, step, links, external)
  return finishLogin(c, p, account, pending.amr, pending.viaIdp)
}

/**
 * `…/verify` of a sign-in this browser no longer holds: expired, ended in another tab, or never
 * this browser's. The answer is the same whatever the uid to a browser without the interaction's
 * cookie, so it tells a stranger nothing: the poll sends the page here, and the page offers to sign
 * in again at the app. The browser that started it learns that another of its tabs went on.
 */
export async function verificationGone(c: PageContext, p: PageRequest, uid: string): Promise<Response> {
  if (polled(p)) return loadPage(`${p.prefix}${p.path}?${p.query}`)
  if (holdsInteraction(p, uid) && (await interactionClaimed(c.core, p.instance, uid)))
    return continuedElsewhere(p)
  return errorPage({
    status: 400,
    title: 'Sign-in expired',
    message: 'This sign-in has expired, or went on in another window. Start again from the application.',
    link: await signInAgain(p),
  })
}

/**
 * The page of a mailed link (verification, password reset) that did its part for sign-in `uid`:
 * the tab that started it goes on by itself (it polls; an SPA keeps its PKCE verifier and state
 * there), so this one says to go back, and offers to finish here instead: the same sign-in where
 * this browser started it (its closed tab's), or a new one at the app from another device.
 */
export async function backToTheSignIn(
  c: PageContext,
  p: PageRequest,
  uid: string,
  done: { title: string; message: string; back?: string },
): Promise<Response> {
  const waiting = await p.instance.provider.Interaction.find(uid)
  // The link names the app too (`client_id`): an expired sign-in is no longer there to ask.
  const clientId = waiting ? String(waiting.params.client_id) : p.query.get('client_id')
  const again = await signInAgain(p, clientId)
  if (!waiting) {
    const message = `${done.message} The sign-in you started has expired: start it again from the application.`
    return hostedHtml(DonePage({ title: done.title, message, link: again }))
  }
  if (await interactionClaimed(c.core, p.instance, uid)) return continuedElsewhere(p, clientId)
  const here = holdsInteraction(p, uid)
    ? `${p.prefix}/interaction/${uid}/verify?client_id=${encodeURIComponent(String(clientId))}`
    : again?.href
  return hostedHtml(
    <Layout title={done.title}>
      <h1 safe>{done.title}</h1>
      <Alert
        kind="ok"
        message={`${done.message} ${done.back ?? 'Now go back to the tab where you were signing in: it continues by itself.'}`}
      />
      {here ? (
        <div class="links">
          <a href={here}>Continue here instead</a>
        </div>
      ) : (
        ''
      )}
    </Layout>,
  )
}

/**
 * `/interaction/<uid>/verify-email?token=…`: the link mailed to a sign-in waiting on its address.
 * It proves the address, once, whoever opens it, and never ends the sign-in by itself: that is the
 * waiting tab's, which goes on by itself, or this tab's by its button (`backToTheSignIn`).
 */
export async function verifyEmailOfSignIn(c: PageContext, p: PageRequest, uid: string): Promise<Response> {
  const { core } = c
  const token = p.query.get('token') ?? ''
  const account = await useAccountToken(core, p.instance.id, token, 'verify_email', uid)
  if (!account) {
    return errorPage({
      ...linkExpired('This verification link is invalid, expired or already used.'),
      link: await signInAgain(p),
    })
  }
  await markEmailVerified(core, account)
  return backToTheSignIn(c, p, uid, {
    title: 'Email verified',
    message: `Thanks — ${account.email} is verified.`,
  })
}
