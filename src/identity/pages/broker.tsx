import { safeEqual } from '../../shared/crypto'
import { Layout } from '../../shared/views/hosted-layout'
import { accountForIdentity } from '../broker/accounts'
import { assertsMfa, BrokerRefused } from '../broker/model'
import type { ExternalIdp } from '../deps'
import type { ExternalSignIn, ExternalStart } from '../engine/extension'
import { signUpsBlocked } from '../engine/extension'
import { hostedHtml, seeOther } from '../engine/hosted'
import { brokerRedirectUri } from '../instances'
import { finishLogin } from './finish-login'
import type { PageContext, PageRequest } from './http'
import type { InteractionDetails, InteractionLinks } from './interaction'
import { beginLinking } from './link-account'
import { resultOf } from './links'
import { beginSecondStep, secondStep } from './mfa-interaction'
import { askToVerify } from './verify-email'

/** The IdPs the sign-in page offers now: none when the login policy turned them off. */
export const offeredIdps = (p: PageRequest): ExternalIdp[] =>
  p.instance.policy.allowExternalIdps ? p.instance.idps : []

/** The offered IdP an `idp_hint` names (by id, or by type when one IdP has it); null otherwise. */
export function hintedIdp(p: PageRequest, hint: unknown): ExternalIdp | null {
  if (typeof hint !== 'string' || !hint) return null
  const offered = offeredIdps(p)
  const byId = offered.find((i) => i.id === hint)
  if (byId) return byId
  const byType = offered.filter((i) => i.type === hint)
  return byType.length === 1 ? byType[0]! : null
}

/** Where the sign-in page sends a click on an IdP's button. */
export const externalStartUrl = (links: Pick<InteractionLinks, 'signInUrl'>, idp: ExternalIdp) =>
  `${links.signInUrl}/idp/${encodeURIComponent(idp.id)}`

const verifierContext = (uid: string) => `broker-verifier:${uid}`

const brokerStartOf = (details: InteractionDetails) =>
  resultOf<ExternalStart>(details, 'broker', {
    idpId: 'string',
    state: 'string',
    nonce: 'string',
    verifier: 'string',
  })

function RefusedPage(props: { message: string; signInUrl: string }) {
  return (
    <Layout title="Sign-in failed">
      <h1>Sign-in failed</h1>
      <p class="sub" safe>
        {props.message}
      </p>
      <div class="links">
        <a href={`${props.signInUrl}?choose=1`}>Back to sign-in</a>
      </div>
    </Layout>
  )
}

/** The IdPs feature's broker: an instance offers IdPs only when a feature owns it (engine/start.ts). */
function brokerOf(c: PageContext): ExternalSignIn {
  if (!c.extensions.externalSignIn) throw new Error('an IdP is offered but no feature signs in through one')
  return c.extensions.externalSignIn
}

const refuse = (links: InteractionLinks, status: number, message: string) =>
  hostedHtml(RefusedPage({ message, signInUrl: links.signInUrl }), status)

/**
 * `/interaction/<uid>/idp/<idp_id>`: a click on an IdP's button (or an `idp_hint`). The request's
 * `state`, `nonce` and PKCE verifier are kept in the interaction (a row of the store: the return may
 * reach another node), and the browser goes to the IdP.
 */
export async function startExternal(
  c: PageContext,
  p: PageRequest,
  links: InteractionLinks,
  idpId: string,
): Promise<Response> {
  const idp = offeredIdps(p).find((i) => i.id === idpId)
  if (!idp) return refuse(links, 404, 'This sign-in method is not offered here any more.')
  try {
    const redirectUri = brokerRedirectUri(c.core.config, p.instance.id)
    const { url, start } = await brokerOf(c).start(idp, redirectUri, links.uid)
    await p.interaction.result(
      // The verifier redeems a code: sealed in the store, as every value that would work if presented.
      { broker: { ...start, verifier: c.core.secrets.seal(start.verifier, verifierContext(links.uid)) } },
      false,
    )
    return seeOther(url)
  } catch (e) {
    if (e instanceof BrokerRefused) return refuse(links, e.status, e.message)
    throw e
  }
}

/**
 * `/broker/callback`, the address registered at every IdP: the answer is handed to the
 * interaction its `state` names (`<uid>.<random>`), on this origin, where the interaction's own
 * cookie proves it is the same browser; the checks are made there.
 */
export async function brokerCallback(p: PageRequest): Promise<Response> {
  const state = p.query.get('state') ?? ''
  const uid = /^([A-Za-z0-9_-]{1,64})\.[A-Za-z0-9_-]+$/.exec(state)?.[1]
  if (!uid) {
    return hostedHtml(
      RefusedPage({
        message:
          'This answer from the sign-in provider belongs to no sign-in in progress. Start again from the application.',
        signInUrl: `${p.prefix}/`,
      }),
      400,
    )
  }
  const forward = new URLSearchParams({ state })
  for (const key of ['code', 'iss', 'error', 'error_description']) {
    const value = p.query.get(key)
    // Some providers' codes are long (Entra's): kept whole up to 8 KiB, refused beyond.
    if (value !== null && value.length <= 8192) forward.set(key, value)
  }
  return seeOther(`${p.prefix}/interaction/${uid}/broker?${forward}`)
}

/**
 * `/interaction/<uid>/broker`: the IdP's answer checked (state, then the code exchange, the ID
 * token's signature, issuer, audience and nonce, or GitHub's verified address), the account found,
 * linked or created (or, for an existing account the IdP is not trusted to vouch for, proved first:
 * link-account.tsx), and the sign-in finished as the login policy wants: a verified address, and
 * its second step unless an IdP trusted with second factors asserted one.
 */
export async function finishExternal(
  c: PageContext,
  p: PageRequest,
  details: InteractionDetails,
  links: InteractionLinks,
): Promise<Response> {
  const start = brokerStartOf(details)
  const state = p.query.get('state') ?? ''
  if (!start || !safeEqual(state, start.state))
    return refuse(
      links,
      400,
      'This answer from the sign-in provider does not match this sign-in. Start again.',
    )
  const idp = offeredIdps(p).find((i) => i.id === start.idpId)
  if (!idp) return refuse(links, 404, 'This sign-in method is not offered here any more.')
  // Used once: a replayed answer finds nothing to check against.
  await p.interaction.result({}, false)
  const error = p.query.get('error')
  const code = p.query.get('code')
  if (error || !code) {
    const message =
      error === 'access_denied'
        ? `The sign-in with ${idp.name} was cancelled.`
        : `${idp.name} did not complete the sign-in. Try again, or choose another way to sign in.`
    return refuse(links, 400, message)
  }
  try {
    const redirectUri = brokerRedirectUri(c.core.config, p.instance.id)
    const verifier = c.core.secrets.open(start.verifier, verifierContext(links.uid))
    const who = await brokerOf(c).finish(idp, redirectUri, { ...start, verifier }, code, p.query.get('iss'))
    const instanceId = p.instance.id
    const blocked = () => signUpsBlocked(c.extensions, instanceId)
    const found = await accountForIdentity(c.core, instanceId, idp, who, p.instance.policy, blocked)
    const { account } = found
    if (found.proveAccount) return await beginLinking(p, account, idp, who.subject, links)
    // An IdP's word on its factors counts only where an admin trusts it (`trust_mfa`): else its
    // `amr` is left out, and the workspace's own second step is asked as after any first factor.
    const amr = idp.trustMfa ? who.amr : []
    if (p.instance.policy.requireEmailVerification && !account.emailVerified)
      return askToVerify(c, p, account, links, amr, idp.name)
    const step = idp.trustMfa && assertsMfa(amr) ? null : await secondStep(c, p, account)
    if (step) return beginSecondStep(p, account, step, links, { amr, viaIdp: idp.name })
    return finishLogin(c, p, account, amr, idp.name)
  } catch (e) {
    if (e instanceof BrokerRefused) return refuse(links, e.status, e.message)
    throw e
  }
}
