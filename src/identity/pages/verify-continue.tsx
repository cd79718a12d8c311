import type { ServerResponse } from 'node:http'
import { findAccount, markEmailVerified, useAccountToken } from '../accounts'
import { assertsMfa } from '../broker/model'
import { type IdentityError, writeError } from '../errors'
import { DonePage } from './components'
import { finishLogin } from './finish-login'
import { interactionGone, linkExpired, type PageContext, type PageRequest, send } from './http'
import type { InteractionDetails, InteractionLinks } from './interaction'
import { interactionLinks } from './links'
import { beginSecondStep, secondStep } from './mfa-interaction'
import { mailLeaves, verifyPendingOf, verifyPendingPage } from './verify-email'

// How a sign-in waiting on its address (verify-email.tsx) goes on: the mailed link finishes it in
// the browser that holds the interaction, and the waiting page polls the interaction to go on by
// itself when the link was opened anywhere else.

/** A request of htmx (the waiting page's poll), as opposed to the browser loading a page. */
const polled = (p: PageRequest) => p.req.headers['hx-request'] === 'true'

/** Has htmx load `location` as a page (the poll's answer whenever there is more than "not yet"). */
function loadPage(res: ServerResponse, location: string) {
  res.writeHead(200, { 'hx-redirect': location, 'cache-control': 'no-store' })
  res.end()
}

/**
 * Where someone whose sign-in is gone starts again: the site of the app the URL names
 * (`client_id`, a client of this instance), by the origin of its first web redirect URI, never an
 * address taken from the request. None for an unknown or native app.
 */
async function signInAgain(p: PageRequest): Promise<IdentityError['link']> {
  const clientId = p.query.get('client_id')
  const client = clientId ? await p.instance.provider.Client.find(clientId) : undefined
  if (client?.applicationType !== 'web') return undefined
  const site = client.redirectUris?.find((uri) => /^https?:\/\//.test(uri))
  return site ? { href: `${new URL(site).origin}/`, label: 'Sign in' } : undefined
}

/**
 * `GET …/verify`: the sign-in goes on once its address is verified. Polled (htmx, with the
 * interaction's cookie), it answers "not yet" with an empty 204, and anything else by sending the
 * page here. Loaded as a page (so, or by the button without script), it ends the sign-in as a
 * right password would have: through the second step the account or the policy asks for.
 */
export async function continueVerified(
  c: PageContext,
  p: PageRequest,
  details: InteractionDetails,
  links: InteractionLinks,
) {
  const pending = verifyPendingOf(details)
  const found = pending ? await findAccount(c.core, p.instance.id, pending.accountId) : undefined
  // Gone, or its password changed (a reset signs out everywhere): the sign-in starts over.
  const account = found && found.authEpoch === pending?.epoch ? found : undefined
  const verified = account && (account.emailVerified || !p.instance.policy.requireEmailVerification)
  if (polled(p)) {
    if (account && !verified) {
      p.res.writeHead(204, { 'cache-control': 'no-store' })
      p.res.end()
      return
    }
    return loadPage(p.res, links.verifyUrl)
  }
  if (!pending || !account) {
    p.res.writeHead(303, { location: links.signInUrl, 'cache-control': 'no-store' })
    p.res.end()
    return
  }
  if (!verified) {
    const mailed = await mailLeaves(c, account.instanceId)
    const error = mailed
      ? 'Your email is not verified yet. Open the link we sent, then continue.'
      : 'Your email is not verified yet. Open the link the administrator gives you, then continue.'
    await send(p.res, 200, verifyPendingPage(p, account, links, mailed, { error }))
    return
  }
  // A passkey alone ends a sign-in; a password leads to the second step, as it does at sign-in, and
  // so does an external IdP that did not assert a second factor of its own.
  const external = pending.viaIdp ? { amr: pending.amr, viaIdp: pending.viaIdp } : undefined
  const needsStep = external ? !assertsMfa(external.amr) : pending.amr.includes('pwd')
  const step = needsStep ? await secondStep(c, p, account) : null
  if (step) return beginSecondStep(p, account, step, links, external)
  await finishLogin(c, p, account, pending.amr, pending.viaIdp)
}

/**
 * `…/verify` of a sign-in this browser no longer holds: expired, ended in another tab, or never
 * this browser's. The answer is the same whatever the uid, so it tells a stranger nothing: the
 * poll sends the page here, and the page offers to sign in again at the app.
 */
export async function verificationGone(p: PageRequest) {
  if (polled(p)) return loadPage(p.res, `${p.prefix}${p.path}?${p.query}`)
  writeError(p.res, {
    status: 400,
    title: 'Sign-in expired',
    message: 'This sign-in has expired, or went on in another window. Start again from the application.',
    link: await signInAgain(p),
  })
}

/**
 * `/interaction/<uid>/verify-email?token=…`: the link mailed to a sign-in waiting on its address.
 * It proves the address, once, whoever opens it. In the browser that holds the interaction (its
 * cookie is scoped to this path) the sign-in goes on at once; anywhere else the page says so, and
 * the waiting page goes on by itself, or offers to sign in again once the sign-in has expired.
 */
export async function verifyEmailOfSignIn(c: PageContext, p: PageRequest, uid: string) {
  const { core } = c
  const { provider } = p.instance
  const token = p.query.get('token') ?? ''
  const account = await useAccountToken(core, p.instance.id, token, 'verify_email', uid)
  if (!account) {
    writeError(p.res, {
      ...linkExpired('This verification link is invalid, expired or already used.'),
      link: await signInAgain(p),
    })
    return
  }
  await markEmailVerified(core, account)
  const details = await provider.interactionDetails(p.req, p.res).catch((e) => {
    if (interactionGone(e)) return null
    throw e
  })
  if (details?.uid === uid && verifyPendingOf(details)?.accountId === account.id)
    return continueVerified(c, p, details, await interactionLinks(p, details))
  const waiting = await provider.Interaction.find(uid)
  await send(
    p.res,
    200,
    DonePage({
      title: 'Email verified',
      message: waiting
        ? `Thanks — ${account.email} is verified. Go back to the window where you were signing in: it continues by itself.`
        : `Thanks — ${account.email} is verified. The sign-in you started has expired: start it again from the application.`,
      link: await signInAgain(p),
    }),
  )
}
