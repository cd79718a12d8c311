import { type AnyElysia, Elysia } from 'elysia'
import type { Core } from '../../core'
import type { Conn } from '../../db/store'
import type { Account } from '../accounts'
import type { ExternalIdentity } from '../broker/model'
import type {
  BrandingLogo,
  ClientRecord,
  ClientSource,
  ExternalIdp,
  InstanceBranding,
  MailMessage,
} from '../deps'
import type { LoginPolicy } from '../login-policy'
import { type HostedRequest, hostedRequests } from './hosted'
import { refuseEngineOwn } from './reserved'

/** The instance a grant, an endpoint or a step serves: a workspace's (features never extend the platform's). */
export interface InstanceRef {
  /** The workspace's id, which is its instance's. */
  id: string
  issuer: string
}

/** An account as the extension points see it. */
export type SignedInAccount = Pick<Account, 'id' | 'email' | 'emailVerified'>

/**
 * A scope and the claims it releases (OpenID Connect Core §5.4) in ID tokens and userinfo, read of
 * the account only when the scope was granted.
 */
export interface ClaimSource {
  scope: string
  claims: string[]
  read(instanceId: string, accountId: string): Promise<Record<string, unknown>>
}

/** A token request of a grant type (RFC 6749 §4.5) to a workspace instance, its client authenticated. */
export interface GrantRequest {
  instance: InstanceRef
  clientId: string
  /** The grant's own parameters, as sent. */
  params: Record<string, string | undefined>
  /** Issues an access token of the client itself (as the client credentials grant does). */
  issueAccessToken(opts?: { scope?: string }): Promise<{
    access_token: string
    token_type: string
    expires_in: number
  }>
}

/**
 * An OAuth grant type (RFC 6749 §4.5) the instances accept, from every confidential client of a
 * workspace: its answer is the token response; an AppError thrown answers `invalid_grant` with
 * its message.
 */
export interface GrantType {
  type: string
  parameters: string[]
  handle(request: GrantRequest): Promise<Record<string, unknown>>
}

/** What an interaction step is asked about a sign-in under way, its account known. */
export interface StepContext {
  instance: InstanceRef
  accountId: string
  /** The scopes the application asked for. */
  scopes: string[]
}

/** One request to a step's page: its GET shows it, its POST (to `action`) answers it. */
export interface StepRequest extends StepContext {
  method: string
  /** The posted form (empty on GET). */
  form: URLSearchParams
  /** Where the step's form posts to. */
  action: string
}

/**
 * An interaction step of a sign-in, after the account is proved and before the application gets
 * its code, in ascending `order`: what oidc-provider's prompts are, a feature's own. `check` says
 * whether it applies to this sign-in; `page` answers its page (a document whose output the feature
 * escaped) until it answers `done`.
 */
export interface InteractionStep {
  /** Unique across features; names its prompt. */
  name: string
  order: number
  check(ctx: StepContext): Promise<boolean> | boolean
  page(req: StepRequest): Promise<{ html: string } | { done: true }>
}

/** What the browser carries to an external IdP, kept in the interaction to check its return against. */
export interface ExternalStart {
  idpId: string
  state: string
  nonce: string
  verifier: string
}

/**
 * The external half of a sign-in through an IdP (the IdPs feature's broker): where the browser goes
 * (code + PKCE, `state`, `nonce`), and the identity the IdP's answer proves, or a `BrokerRefused`. The
 * engine keeps the rest (the pages, the start in the interaction, the account the identity is).
 * One owner; it serves every instance, the platform's (whose IdPs are the operator's) included.
 */
export interface ExternalSignIn {
  start(idp: ExternalIdp, redirectUri: string, uid: string): Promise<{ url: string; start: ExternalStart }>
  finish(
    idp: ExternalIdp,
    redirectUri: string,
    start: ExternalStart,
    code: string,
    iss: string | null,
  ): Promise<ExternalIdentity>
}

/**
 * A client a feature defines in code for each workspace instance (the dashboard's "Try sign-in"
 * relying party): served by that instance alone, from code, so never read from the store.
 */
export interface BuiltInClient {
  /** Its id at this instance: one no app can hold (an app's client id is 22 random characters). */
  clientId(instanceId: string): string
  record(instanceId: string): ClientRecord
}

/** Whether a workspace instance refuses new users now: any check that says so refuses the sign-up. */
export interface SignUpCheck {
  name: string
  blocks(workspaceId: string): Promise<boolean>
}

/** Runs as each sign-in to a workspace instance finishes, before its tokens are issued. */
export type SignedInHook = (workspaceId: string, account: SignedInAccount) => Promise<void>

/** The mail the plane sends (verification, reset). */
export interface MailSource {
  send(core: Core, msg: MailMessage): Promise<unknown> | unknown
  /**
   * Whether mail of a workspace (null: the platform's) goes anywhere now, so a page never says "we
   * sent a link" for one that is dropped. Without it mail is taken to leave.
   */
  leaves?(workspaceId: string | null): Promise<boolean>
}

/** A workspace's look on its hosted pages, and the logo served at `{auth_url}/branding/logo`. */
export interface BrandingSource {
  settings(workspaceId: string): Promise<InstanceBranding | null>
  logo(workspaceId: string): Promise<BrandingLogo | null>
}

/** The bounds of a resource server's access token TTL, in seconds (`ResourceServer.accessTokenTTL`). */
export const RESOURCE_TOKEN_TTL = { min: 60, max: 86_400 } as const

/**
 * A resource server (RFC 8707) of a workspace instance: its access tokens are ES256 JWTs (RFC
 * 9068) whose `aud` is the resource itself, as named by the application.
 */
export interface ResourceServer {
  /** The scopes (RFC 6749 §3.3 tokens) a token for it may carry: others asked for are left out. */
  scopes: string[]
  /** How long its access tokens live, in whole seconds within RESOURCE_TOKEN_TTL (60 s to 24 h). */
  accessTokenTTL: number
}

/**
 * Which resource an application of a workspace instance may name (`resource`, RFC 8707), asked at
 * its authorization and on every token request: the resource server, `null` to refuse it
 * (`invalid_target`), or `undefined` to leave the engine's default (any resource, the instance's
 * scopes, 1 h). The instance's own issuer (client credentials without a resource) stays the
 * engine's and is never asked. Synchronous: oidc-provider awaits it on every token, so a feature
 * whose resource servers are stored keeps them in memory itself and answers from there. An answer
 * of another shape, or a TTL out of bounds, is the feature's bug: the request fails (server_error)
 * and no token is issued.
 */
export type ResourceServerSource = (
  instance: InstanceRef,
  resource: string,
) => ResourceServer | null | undefined

/** The control plane's sessions an account opened. */
export interface SessionSource {
  /** Ends an account's dashboard sessions on `conn`: the transaction that changes its password. */
  end(conn: Conn, accountId: string): Promise<void>
}

/**
 * What a feature lends the identity engine (`Feature.identity`). The extension points are lists,
 * composed across features in list order; the sources below them have exactly one owner. None may
 * name what is the engine's own (reserved.ts).
 */
export interface IdentityExtension {
  claims?: ClaimSource[]
  grants?: GrantType[]
  /**
   * Elysia plugins (TypeBox, AppError: the control plane's stack) whose routes are mounted under
   * every workspace instance's issuer (`GET /ping` answers `{issuer}/ping`); start them with
   * `instanceEndpoints` to have the instance in the context.
   */
  endpoints?: AnyElysia[]
  steps?: InteractionStep[]
  signUpChecks?: SignUpCheck[]
  signedIn?: SignedInHook[]
  /** Clients a feature defines in code for every workspace instance: never stored, never listed as an app. */
  builtInClients?: BuiltInClient[]
  // One owner each.
  /** Where the clients of workspace instances come from. Required. */
  clients?: ClientSource
  /** A workspace instance's login policy. Required. */
  loginPolicy?: (workspaceId: string) => Promise<LoginPolicy>
  mail?: MailSource
  /** Required. */
  sessions?: SessionSource
  /** A workspace instance's active external IdPs; without an owner its sign-in page offers none. */
  externalIdps?: (workspaceId: string) => Promise<ExternalIdp[]>
  /** The protocol of a sign-in through an external IdP; without an owner no instance offers one. */
  externalSignIn?: ExternalSignIn
  /** Without an owner every page has the platform's look. */
  branding?: BrandingSource
  /** A workspace's display name (the issuer an authenticator app lists); else the issuer's address. */
  instanceName?: (workspaceId: string) => Promise<string | null>
  /** The resource servers of workspace instances; without an owner, the engine's default for all. */
  resourceServers?: ResourceServerSource
}

type SourceName = Exclude<keyof IdentityExtension, ListName>
type ListName = 'claims' | 'grants' | 'endpoints' | 'steps' | 'signUpChecks' | 'signedIn' | 'builtInClients'

const LISTS = [
  'claims',
  'grants',
  'endpoints',
  'steps',
  'signUpChecks',
  'signedIn',
  'builtInClients',
] as const
const REQUIRED = ['clients', 'loginPolicy', 'mail', 'sessions'] as const
const OPTIONAL = [
  'externalIdps',
  'externalSignIn',
  'branding',
  'instanceName',
  'resourceServers',
] as const satisfies readonly SourceName[]

/** Every feature's extension, composed once at start: what the engine reads. */
export type Extensions = { [K in ListName]-?: NonNullable<IdentityExtension[K]> } & {
  [K in (typeof REQUIRED)[number]]-?: NonNullable<IdentityExtension[K]>
} & { [K in (typeof OPTIONAL)[number]]: IdentityExtension[K] | null }

/** What composition reads of a feature: its name and its extension. */
export interface Extending {
  name: string
  identity?(core: Core): IdentityExtension
}

/**
 * Composes the features' extensions: the lists concatenated in feature order (the steps then by
 * their `order`, stably), each source taken from its one owner. Two owners of a source, a missing
 * required one, two steps, claims' scopes, claims or grants of one name, or one the engine owns
 * (a grant type, scope, claim, prompt or path of its own) stop the start with an error naming it.
 */
export function composeExtensions(core: Core, features: readonly Extending[]): Extensions {
  const lists = Object.fromEntries(LISTS.map((k) => [k, []])) as unknown as Record<ListName, unknown[]>
  const owners = new Map<SourceName, string>()
  const sources: Partial<Record<SourceName, unknown>> = {}
  for (const f of features) {
    const extension = f.identity?.(core) ?? {}
    refuseEngineOwn(f.name, extension)
    for (const [key, value] of Object.entries(extension)) {
      if (value === undefined) continue
      if ((LISTS as readonly string[]).includes(key)) {
        lists[key as ListName].push(...(value as unknown[]))
        continue
      }
      const name = key as SourceName
      const owner = owners.get(name)
      if (owner)
        throw new Error(`identity source "${name}" is provided by two features: ${owner} and ${f.name}`)
      owners.set(name, f.name)
      sources[name] = value
    }
  }
  const missing = REQUIRED.filter((name) => !owners.has(name))
  if (missing.length)
    throw new Error(
      `no feature provides the identity source${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`,
    )
  const composed = {
    ...lists,
    ...Object.fromEntries(OPTIONAL.map((k) => [k, null])),
    ...sources,
  } as Extensions
  // Two scopes releasing one claim: the later source's answer replaced the other's (accountFinder).
  const named: [string, string[]][] = [
    ['interaction step', composed.steps.map((s) => s.name)],
    ['claim scope', composed.claims.map((c) => c.scope)],
    ['claim', composed.claims.flatMap((c) => c.claims)],
    ['grant type', composed.grants.map((g) => g.type)],
  ]
  for (const [what, names] of named) unique(what, names)
  composed.steps = [...composed.steps].sort((a, b) => a.order - b.order)
  return composed
}

function unique(what: string, names: string[]) {
  const twice = names.find((n, i) => names.indexOf(n) !== i)
  if (twice !== undefined)
    throw new Error(`two features extend the identity engine with the ${what} "${twice}"`)
}

/**
 * The start of an instance's endpoints plugin: its routes have `instance` (the workspace instance
 * the request was addressed to) in their context.
 */
export const instanceEndpoints = (name: string) =>
  new Elysia({ name }).derive({ as: 'global' }, ({ request }) => {
    const { instance } = hostedRequests.get(request) as HostedRequest
    return { instance: { id: instance.id, issuer: instance.issuer } as InstanceRef }
  })

/** Whether a workspace instance refuses new users now: asked of every sign-up check, at once. */
export async function signUpsBlocked(extensions: Pick<Extensions, 'signUpChecks'>, workspaceId: string) {
  const answers = await Promise.all(extensions.signUpChecks.map((c) => c.blocks(workspaceId)))
  return answers.includes(true)
}
