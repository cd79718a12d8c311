import type { Account } from '../accounts'
import { type IdentityLink, linkIdentity } from '../broker/accounts'
import { PLATFORM } from '../instances'
import { recordSignIn } from '../users'
import type { PageContext, PageRequest } from './http'

/**
 * Authentication methods (RFC 8176) a sign-in used, carried into the ID token's `amr`: `pwd`
 * (password), `otp` (TOTP or a recovery code), `hwk`/`swk` (a passkey: hardware- or software-bound),
 * and after a sign-in through an external IdP an admin trusts with second factors (`trust_mfa`), the
 * registry's values that IdP asserted.
 */
export type Amr = 'pwd' | 'otp' | 'hwk' | 'swk' | (string & {})

/**
 * The one way a hosted sign-in ends: the interaction is finished with the account and the methods
 * it used, and a workspace instance records `session.started` (with the external IdP it came
 * through). Every factor (password, MFA, passkey, invitation, sign-up, external IdP) ends here, and
 * so does the linking of an IdP's identity whose account the user just proved (`link`).
 */
export async function finishLogin(
  c: PageContext,
  p: PageRequest,
  account: Account,
  amr: Amr[],
  viaIdp: string | null = null,
  link?: IdentityLink,
): Promise<Response> {
  if (link) await linkIdentity(c.core, p.instance.id, account.id, link)
  await recordSignIn(c.core, account)
  if (p.instance.id !== PLATFORM) {
    for (const hook of c.extensions.signedIn) await hook(p.instance.id, account)
    await c.core.emit('session.started', p.instance.id, {
      user_id: account.id,
      name: account.name,
      email: account.email,
      via_idp: viaIdp,
    })
  }
  return p.interaction.finish({ login: { accountId: account.id, amr } }, false)
}
