import type { PageRequest } from './http'
import type { InteractionDetails, InteractionLinks } from './interaction'

/** The links of an interaction's pages. */
export async function interactionLinks(
  p: PageRequest,
  details: InteractionDetails,
): Promise<InteractionLinks> {
  const clientId = String(details.params.client_id)
  const client = await p.instance.provider.Client.find(clientId)
  const base = `${p.prefix}/interaction/${details.uid}`
  return {
    uid: details.uid,
    action: `${base}/login`,
    signUpUrl: `${base}/signup`,
    signInUrl: base,
    forgotUrl: `${base}/forgot`,
    mfaUrl: `${base}/mfa`,
    linkUrl: `${base}/link`,
    passkeyUrl: p.instance.policy.mfa === 'off' ? null : `${base}/passkey`,
    verifyUrl: `${base}/verify?client_id=${encodeURIComponent(clientId)}`,
    clientId,
    appName: client?.clientName ?? 'the application',
  }
}
