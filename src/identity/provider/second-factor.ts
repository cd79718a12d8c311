import { interactionPolicy } from 'oidc-provider'
import type { Core } from '../../core'
import { accountFactors, hasSecondFactor } from '../mfa/factors'
import { current } from './instance-scope'

const SECOND_FACTORS = new Set(['otp', 'hwk', 'swk'])

/**
 * oidc-provider's prompts plus one check on `login`: a session signed in without a second factor
 * signs in again (password, then the factor) when the served instance requires MFA or the account has a
 * factor. Without it a session opened before `mfa: required`, or before the user set up a factor
 * (a stolen cookie, say), would keep getting codes with its password alone.
 */
export function promptsFor(core: Core) {
  const { base, Check } = interactionPolicy
  const prompts = base()
  prompts.get('login')?.checks.add(
    new Check('second_factor', 'A second factor is required', 'login_required', async (ctx) => {
      const { session } = ctx.oidc
      if (!session?.accountId) return Check.NO_NEED_TO_PROMPT
      const amr = (session as { amr?: string[] }).amr ?? []
      if (amr.some((m) => SECOND_FACTORS.has(m))) return Check.NO_NEED_TO_PROMPT
      const { id, policy } = current()
      if (policy.mfa === 'required') return Check.REQUEST_PROMPT
      return hasSecondFactor(await accountFactors(core, id, session.accountId))
        ? Check.REQUEST_PROMPT
        : Check.NO_NEED_TO_PROMPT
    }),
  )
  return prompts
}
