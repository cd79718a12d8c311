import { defineErrorCodes } from '../../shared/errors'

/** What a workspace's IdPs refuse. */
export const IdpErrors = defineErrorCodes({
  IDP_NOT_FOUND: 'Identity provider not found',
  ISSUER_REQUIRED: 'An oidc identity provider needs its issuer URL',
  ISSUER_NOT_ALLOWED: 'Only an oidc identity provider takes an issuer',
  ISSUER_REFUSED: 'This issuer URL cannot be used',
  SCOPES_OPENID: 'An OpenID Connect provider needs the openid scope (it is what returns the ID token)',
  SCOPES_GITHUB_EMAIL: 'GitHub needs the user:email (or user) scope to tell the verified address',
  TOO_MANY_IDPS: 'A workspace has at most 20 identity providers: delete one first',
  WORKSPACE_DELETING: 'This workspace is being deleted',
})
