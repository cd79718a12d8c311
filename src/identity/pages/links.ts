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

type FieldType = 'string' | 'number' | 'array'

/**
 * What an earlier step of this sign-in kept in the interaction's result under `key`, when it still
 * has the types its reader relies on (the result is read back from the store): else null.
 */
export function resultOf<T>(
  details: InteractionDetails,
  key: string,
  fields: Partial<Record<keyof T & string, FieldType>>,
): T | null {
  const value = (details.result as Record<string, unknown> | undefined)?.[key]
  if (!value || typeof value !== 'object') return null
  for (const [name, type] of Object.entries(fields)) {
    const field = (value as Record<string, unknown>)[name]
    if (type === 'array' ? !Array.isArray(field) : typeof field !== type) return null
  }
  return value as T
}
