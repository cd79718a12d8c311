import { createHash } from 'node:crypto'
import type { Config } from '../../config'
import type { ExternalIdp } from '../deps'
import { DEFAULT_IDP_SCOPES } from './model'

/**
 * The platform instance's IdPs (the dashboard's own sign-in), from configuration; ids are the types.
 * The install's operator chose them (no workspace member can add one), so, as other products do
 * with Google's and Microsoft's verified addresses, their verified address links to the existing
 * account and their `amr` counts: the workspace IdPs' `trust_email` and `trust_mfa`, set.
 */
export const platformIdps = (config: Pick<Config, 'idps'>): ExternalIdp[] =>
  config.idps.platform.map((i) => ({
    // A company IdP's links belong to its issuer: another issuer's subjects never match them.
    id: i.issuer ? `oidc-${createHash('sha256').update(i.issuer).digest('hex').slice(0, 16)}` : i.type,
    trusted: true,
    trustEmail: true,
    trustMfa: true,
    type: i.type,
    name: i.name,
    clientId: i.clientId,
    clientSecret: () => i.clientSecret,
    issuer: i.issuer,
    scopes: DEFAULT_IDP_SCOPES[i.type],
  }))
