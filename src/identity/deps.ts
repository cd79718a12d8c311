import type { IdpType } from '../config'
import type { BrandSettings } from '../shared/views/brand'

/**
 * A mail the plane sends (verification, reset); `workspaceId` is null for the platform instance. The
 * plane's own port: the mail feature's message is a superset, so its `sendMail` is its `mail.send` as is.
 */
export interface MailMessage {
  to: string
  subject: string
  text: string
  workspaceId: string | null
}

type ClientType = 'web' | 'spa' | 'native'

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
   * that asked while a read was under way (engine/read-batching.ts).
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
