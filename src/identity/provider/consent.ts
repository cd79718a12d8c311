import type { Configuration } from 'oidc-provider'

/**
 * Every app of an instance belongs to its workspace: first-party, so consent is implied. The grant
 * oidc-provider would ask consent for is made (or extended) here, with the scopes and resources
 * asked for.
 */
export const loadExistingGrant: Configuration['loadExistingGrant'] = async (ctx) => {
  const { client, session, params } = ctx.oidc
  if (!client || !session?.accountId) return undefined
  const grantId = ctx.oidc.result?.consent?.grantId || session.grantIdFor(client.clientId)
  const grant = grantId
    ? await ctx.oidc.provider.Grant.find(grantId)
    : new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId })
  if (!grant) return undefined
  grant.addOIDCScope(String(params?.scope ?? 'openid'))
  for (const resource of [ctx.oidc.params?.resource ?? []].flat() as string[]) {
    grant.addResourceScope(resource, String(params?.scope ?? ''))
  }
  await grant.save()
  return grant
}
