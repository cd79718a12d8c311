import type Provider from 'oidc-provider'
import { errors, type KoaContextWithOIDC } from 'oidc-provider'
import { AppError } from '../../shared/errors'
import { current } from '../provider/instance-scope'
import type { GrantType } from './extension'

/**
 * The features' grant types, registered on the shared Provider (RFC 6749 §4.5): oidc-provider
 * authenticates the client and checks it may use the grant (clients.ts lists the features' grants
 * for a workspace's confidential clients) before the feature's handler runs.
 */
export function registerGrants(provider: Provider, grants: readonly GrantType[]): void {
  for (const grant of grants) {
    const handler = async (ctx: KoaContextWithOIDC) => {
      const client = ctx.oidc.client!
      const { id, issuer } = current()
      const params = ctx.oidc.params as Record<string, string | undefined>
      try {
        ctx.body = await grant.handle({
          instance: { id, issuer },
          clientId: client.clientId,
          params: Object.fromEntries(grant.parameters.map((name) => [name, params[name]])),
          issueAccessToken: async (opts = {}) => {
            const token = new ctx.oidc.provider.ClientCredentials({ client, scope: opts.scope })
            ctx.oidc.entity('ClientCredentials', token)
            const value = await token.save()
            return { access_token: value, token_type: 'Bearer', expires_in: token.expiration }
          },
        })
      } catch (e) {
        // InvalidGrant would answer its fixed description; the feature's message is what a client needs.
        if (e instanceof AppError) throw new errors.CustomOIDCProviderError('invalid_grant', e.message)
        throw e
      }
    }
    provider.registerGrantType(grant.type, handler, grant.parameters)
  }
}
