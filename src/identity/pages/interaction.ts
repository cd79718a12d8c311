import { appError } from '../../shared/errors'
import type { InteractionDetails } from '../engine/hosted'
import { runStep, stepOf } from '../engine/steps'
import { IDENTITY_ERRORS } from '../error-codes'
import { finishExternal, startExternal } from './broker'
import { forgotPassword } from './forgot-password'
import type { InteractionPost } from './forms'
import type { PageContext, PageRequest } from './http'
import { linkAccount } from './link-account'
import { interactionLinks } from './links'
import { mfaStep, passkeySignIn } from './mfa-interaction'
import { signIn } from './sign-in'
import { signUp } from './sign-up'
import { continueVerified, verificationGone } from './verify-continue'
import { resendVerification } from './verify-email'

export type { InteractionDetails }

/** The actions of an interaction's pages (`/interaction/<uid>/<action>`), as the browser opens them. */
export const INTERACTION_ACTIONS = [
  'login',
  'signup',
  'mfa',
  'link',
  'passkey',
  'verify',
  'forgot',
  'abort',
  'broker',
  'step',
] as const
export type InteractionAction = (typeof INTERACTION_ACTIONS)[number] | 'idp'

/** A page's fields as posted: a field its form may leave out is undefined. */
type Posted = Readonly<Record<string, string | undefined>>

/** Where the pages of one interaction link to, and the app the user signs in to. */
export interface InteractionLinks {
  /** The interaction's uid. */
  uid: string
  action: string
  signUpUrl: string
  signInUrl: string
  forgotUrl: string
  /** The second step of a sign-in (mfa-interaction.tsx). */
  mfaUrl: string
  /** The proof of an existing account an IdP's identity is to be linked to (link-account.tsx). */
  linkUrl: string
  /** A sign-in with a passkey alone; null where the policy has MFA off. */
  passkeyUrl: string | null
  /**
   * Where a sign-in waiting on its address goes on (verify-continue.tsx); it names the app, for the
   * page that offers to sign in again once the interaction is gone.
   */
  verifyUrl: string
  clientId: string
  appName: string
}

/**
 * An oidc-provider interaction (`/interaction/<uid>[/login|/signup|/mfa|/link|/passkey|/verify|/forgot|/abort]`,
 * `/idp/<idp_id>` and `/broker`): the sign-in page, the sign-up page, a sign-in through an external
 * IdP and its return, the proof of an existing account an IdP's identity is to be linked to, the
 * second step of a sign-in, a sign-in with a passkey alone, the sign-in waiting on its address (its
 * poll) or on a new password (a reset link asked from it), a cancel, the consent prompt, which is
 * answered without a page, and the features' steps. Their forms' posts: `interactionPost`.
 */
export const interaction = (
  c: PageContext,
  p: PageRequest,
  uid: string,
  action?: InteractionAction,
  idpId?: string,
): Promise<Response> =>
  opened(c, p, uid, action, null, (details, links) => {
    if (action === 'idp') return startExternal(c, p, links, idpId!)
    if (action === 'broker') return finishExternal(c, p, details, links)
    if (action === 'signup') return signUp(c, p, links, null)
    if (action === 'mfa') return mfaStep(c, p, details, links, null)
    if (action === 'link') return linkAccount(c, p, details, links, null)
    if (action === 'passkey') return passkeySignIn(c, p, links, null)
    if (action === 'forgot') return forgotPassword(c, p, null, links)
    if (action === 'verify') return continueVerified(c, p, details, links)
    return signIn(c, p, details, links, null)
  })

/**
 * A form posted to an interaction's page: the password's check, a new account, the second step's
 * code or passkey, the password that links an IdP's identity, a passkey's sign-in, a new
 * verification link, a reset link asked for, and a feature's step's form.
 */
export const interactionPost = (
  c: PageContext,
  p: PageRequest,
  uid: string,
  posted: InteractionPost,
): Promise<Response> =>
  opened(c, p, uid, posted.action, posted.form, (details, links) => {
    switch (posted.action) {
      case 'login':
        return signIn(c, p, details, links, posted.form)
      case 'signup':
        return signUp(c, p, links, posted.form)
      case 'mfa':
        return mfaStep(c, p, details, links, posted.form)
      case 'link':
        return linkAccount(c, p, details, links, posted.form)
      case 'passkey':
        return passkeySignIn(c, p, links, posted.form)
      case 'verify':
        return resendVerification(c, p, details, links)
      case 'forgot':
        return forgotPassword(c, p, posted.form, links)
      case 'step':
        // The step was answered meanwhile (another tab): the sign-in's page, as for any other.
        return signIn(c, p, details, links, null)
    }
  })

/**
 * The interaction this browser holds, up to its action's own page: a cancel, the consent prompt,
 * a feature's step (handed whatever form was posted) are answered here; `then` answers the rest.
 */
async function opened(
  c: PageContext,
  p: PageRequest,
  uid: string,
  action: InteractionAction | undefined,
  posted: Posted | null,
  then: (details: InteractionDetails, links: InteractionLinks) => Promise<Response>,
): Promise<Response> {
  // The waiting page polls and mails a link: once its sign-in is gone it is sent to a way back.
  const details = action === 'verify' ? await p.interaction.held() : await p.interaction.details()
  if (!details) return verificationGone(c, p, uid)
  if (details.uid !== uid) throw appError(IDENTITY_ERRORS.INTERACTION_MISMATCH, 400)
  if (action === 'abort') {
    return p.interaction.finish(
      { error: 'access_denied', error_description: 'The user cancelled the sign-in' },
      true,
    )
  }
  if (details.prompt.name === 'consent') return consent(p, details)
  const step = stepOf(c, details)
  if (step) return runStep(p, details, step, posted)
  return then(details, await interactionLinks(p, details))
}

/** Apps of an instance are first-party: consent (e.g. prompt=consent for offline_access) is implied. */
async function consent(p: PageRequest, details: InteractionDetails): Promise<Response> {
  const { provider } = p.instance
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({
        accountId: details.session?.accountId,
        clientId: String(details.params.client_id),
      })
  if (!grant) throw appError(IDENTITY_ERRORS.GRANT_GONE, 400)
  const missing = details.prompt.details as {
    missingOIDCScope?: string[]
    missingResourceScopes?: Record<string, string[]>
  }
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '))
  for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
    grant.addResourceScope(resource, scopes.join(' '))
  }
  const grantId = await grant.save()
  return p.interaction.finish({ consent: { grantId } }, true)
}
