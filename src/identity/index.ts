// The identity plane's only face: nothing outside src/identity imports anything else of it. It
// stays light (no oidc-provider) so job workers, which need accounts and keys, never load the
// provider; `startIdentityPlane` loads the rest.
import type { Core } from '../core'
import type { Extensions } from './engine/extension'
import type { IdentityPlane } from './engine/start'

export {
  type Account,
  checkPassword,
  findAccount,
  findAccountByEmail,
  findAccounts,
  normalizeEmail,
  type PasswordRule,
  passwordRuleFor,
  signUp,
  type UserAccount,
} from './accounts'
export { brandingLogoUrl, logoImageSource } from './branding'
export { deleteIdpLinks } from './broker/accounts'
export { BrokerRefused, DEFAULT_IDP_SCOPES, type ExternalIdentity } from './broker/model'
export { clientRecordOf } from './client-records'
export type {
  BrandingLogo,
  ClientKey,
  ClientSource,
  ExternalIdp,
  InstanceBranding,
  MailMessage,
  WorkspaceState,
} from './deps'
export {
  type BuiltInClient,
  type ClaimSource,
  composeExtensions,
  type Extending,
  type Extensions,
  type ExternalSignIn,
  type ExternalStart,
  type GrantType,
  type IdentityExtension,
  type InstanceRef,
  type InteractionStep,
  instanceEndpoints,
  RESOURCE_TOKEN_TTL,
  type ResourceServer,
  type ResourceServerSource,
  type SignUpCheck,
} from './engine/extension'
export { ensureInstanceKeys, localJwks } from './engine/keys'
export type { Caller, IdentityPlane, Route } from './engine/start'
export { brokerRedirectUri, issuerFor, PLATFORM } from './instances'
export { accountMfaSummary, type MfaSummary } from './mfa/factors'
export { resetAccountMfa } from './mfa/reset'
export { platformClient } from './platform-clients'
export {
  createMachineTokenIssuer,
  createPlatformTokenVerifier,
  type MachineGrant,
  type PlatformCaller,
} from './platform-tokens'
export { purgeExpiredIdentityRows } from './purge'
export { accounts } from './schema'
export { deleteInstanceData } from './teardown'
export {
  type AccountLinkPurpose,
  type AccountPage,
  deleteAccount,
  INVITE_TTL_MS,
  type Invitation,
  inviteAccount,
  listAccounts,
  type ReissuedLink,
  reissueAccountLink,
} from './users'

/** Starts the identity plane of this process with what the features lend it (`composeExtensions`). */
export async function startIdentityPlane(core: Core, extensions: Extensions): Promise<IdentityPlane> {
  const { createIdentityPlane } = await import('./engine/start')
  return createIdentityPlane(core, extensions)
}

export { DEFAULT_LOGIN_POLICY, type LoginPolicy, type MfaMode, PLATFORM_LOGIN_POLICY } from './login-policy'
