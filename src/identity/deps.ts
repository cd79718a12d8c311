import type { IdpType } from '../config'
import type { Core } from '../core'
import type { Conn } from '../db/store'
import type { BrandSettings } from '../shared/views/brand'
import type { Account } from './accounts'
import type { LoginPolicy } from './policy'

/**
 * A mail the plane sends (verification, reset); `workspaceId` is null for the platform instance. The
 * plane's own port: the mail feature's message is a superset, so its `sendMail` is injected as is.
 */
export interface MailMessage {
  to: string
  subject: string
  text: string
  workspaceId: string | null
}

export type ClientType = 'web' | 'spa' | 'native'

/** A client of an instance as the plane needs it: an app of a workspace, or one of the platform's own. */
export interface ClientRecord {
  clientId: string
  name: string
  /** SHA-256 of the secret; confidential (`web`) clients only. */
  clientSecretHash: string | null
  /** The secret before a rotation with a grace: accepted beside the new one until `until` (epoch ms). */
  previousSecret?: { hash: string; until: number } | null
  type: ClientType
  redirectUris: string[]
  postLogoutRedirectUris: string[]
  /** OAuth grants beyond what the type implies (e.g. the device code for the CLI). */
  extraGrants: string[]
}

/** A client asked for by its instance and id. */
export interface ClientKey {
  instanceId: string
  clientId: string
}

/** Where the clients of workspace instances come from (the apps feature). */
export interface ClientSource {
  /**
   * Clients in one read, in the order asked: null where the instance has no such client. One for a
   * token request; many for the reads ahead of a node's busy instances, or for the token requests
   * that asked while a read was under way (gather.ts).
   */
  find(wanted: readonly ClientKey[]): Promise<(ClientRecord | null)[]>
}

/**
 * An external identity provider an instance's sign-in page offers (the idps feature's rows, or the
 * platform's from configuration). The secret stays sealed until the code exchange opens it.
 */
export interface ExternalIdp {
  /** `idp_…` for a workspace's; the platform's: the type (`google`, …), `oidc-<issuer digest>` for its company IdP. */
  id: string
  type: IdpType
  name: string
  clientId: string
  clientSecret(): string
  /** A generic `oidc` IdP's issuer; null for the named ones (their endpoints are configuration). */
  issuer: string | null
  scopes: string[]
  /**
   * The operator's own (the platform's, from configuration): reached without the outbound guard
   * that holds every workspace's issuer, like the named providers' endpoints.
   */
  trusted?: boolean
  /**
   * DESIGN "IdPs": its verified address links to an existing account of that address without that
   * account's own sign-in (else the user proves the account first: pages/link-account.tsx).
   */
  trustEmail: boolean
  /** Its `amr` counts as the login policy's second factor (else the workspace's own step is asked). */
  trustMfa: boolean
}

/** A workspace's branding as its instance needs it: the logo by its version alone (its bytes are fetched when served). */
export interface InstanceBranding extends BrandSettings {
  /** The logo's version (a digest of its bytes): its ETag, and the query of its URL. */
  logo: { version: string } | null
}

/** A workspace's logo as its instance serves it: the type sniffed at upload, the bytes as stored. */
export interface BrandingLogo {
  contentType: string
  bytes: Uint8Array
  version: string
}

/** What the identity plane reads of an instance's workspace on every node, and remembers (MEMO_MS). */
export interface WorkspaceState {
  /** Whether its instance may serve now: only while the workspace is `active`. */
  active: boolean
  /** Its own data-plane rate (requests per second; Pro and above), or null for the configured default. */
  dataPlaneRps: number | null
}

/**
 * What the identity plane needs from the features, injected at start-up (app.ts/server.ts): the
 * plane imports no feature, and reads no feature's table.
 */
export interface IdentityDeps {
  sendMail(core: Core, msg: MailMessage): Promise<unknown> | unknown
  /**
   * Whether mail of a workspace (null: the platform's) goes anywhere now (a mail server, or the
   * dev outbox), so a page never says "we sent a link" for one that is dropped. Optional: without
   * it mail is taken to leave.
   */
  mailLeaves?(workspaceId: string | null): Promise<boolean>
  clients: ClientSource
  /**
   * Ends what the control plane opened on an account's sign-in (its dashboard sessions), on `conn`:
   * the transaction that changes the account's password.
   */
  endAccountSessions(conn: Conn, accountId: string): Promise<void>
  /** A workspace instance's login policy (the login-policy feature); never asked for `platform`. */
  loginPolicy(workspaceId: string): Promise<LoginPolicy>
  /**
   * A workspace instance's active external IdPs (the idps feature); never asked for `platform`.
   * Optional: without it a workspace's sign-in page offers none.
   */
  externalIdps?(workspaceId: string): Promise<ExternalIdp[]>
  /**
   * A workspace's branding (the branding feature), read with its login policy and IdPs; never asked
   * for `platform`. Optional: without it every page has the platform's look.
   */
  branding?(workspaceId: string): Promise<InstanceBranding | null>
  /** A workspace's logo, served at `{auth_url}/branding/logo`. Optional, with `branding`. */
  brandingLogo?(workspaceId: string): Promise<BrandingLogo | null>
  /**
   * A workspace's display name, for what users see of their instance outside its pages (the issuer
   * an authenticator app lists). Optional: without it the issuer's address stands in.
   */
  instanceName?(workspaceId: string): Promise<string | null>
  /**
   * The slugs of the tenants an account of a workspace instance belongs to: the `tenants` claim of
   * its ID tokens and userinfo, released by the `tenants` scope (DESIGN "Tenants"). Optional:
   * without it the claim is never released.
   */
  tenantsOf?(instanceId: string, accountId: string): Promise<string[]>
  /**
   * Runs as each sign-in to a workspace instance finishes, before its tokens are issued: the
   * tenants the account's proved address was invited to are joined (DESIGN "Tenants"). Optional.
   */
  accountSignedIn?(
    workspaceId: string,
    account: Pick<Account, 'id' | 'email' | 'emailVerified'>,
  ): Promise<void>
  /**
   * Counts a workspace instance's monthly active user as each sign-in finishes (the billing
   * feature's MAU metering: one upsert). Optional: without it nothing is metered.
   */
  activeUser?(workspaceId: string, accountId: string): Promise<void>
  /**
   * Whether a workspace instance refuses new users now (Free's included MAU or the spending cap
   * reached): its sign-up page and just-in-time IdP sign-up say so; existing users still sign in.
   * Optional: without it sign-ups are never refused for usage.
   */
  signupsBlocked?(workspaceId: string): Promise<boolean>
}
