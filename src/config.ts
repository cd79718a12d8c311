import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { isPostgresUrl } from './db/columns'
import { type Cidr, inCidr, parseCidr, parseIp } from './shared/client-address'

export const VERSION = '0.1.0'

export type LogLevel = 'debug' | 'info' | 'warn' | 'error'

export interface Config {
  baseUrl: string
  host: string
  port: number
  dataDir: string
  databasePath: string
  /** `postgres://…` when the store is PostgreSQL (several nodes); null for SQLite in DATA_DIR. */
  databaseUrl: string | null
  /** Connections per node to PostgreSQL (each job worker thread opens its own two). */
  databasePoolSize: number
  /** 32-byte master key for secrets at rest (AES-256-GCM). */
  secretKey: Buffer
  logLevel: LogLevel
  jobWorkers: number
  /**
   * Jobs in flight at once per worker thread (`JOB_CONCURRENCY`): deliveries wait on the network,
   * and one endpoint takes at most `webhooks.endpointConcurrency` of them.
   */
  jobConcurrency: number
  /** Seconds a claimed job stays leased before another worker may take it over. */
  jobLeaseSeconds: number
  /** Issuer template of identity instances; `{workspace_id}` is replaced. */
  authUrlTemplate: string
  smtpUrl: string | null
  smtpFrom: string
  /** Serve /dev/outbox (to the platform administrator) and keep mail there when SMTP is unset. */
  devOutbox: boolean
  /** Reverse proxies whose X-Forwarded-For is believed (TRUSTED_PROXIES); none by default. */
  trustedProxies: Cidr[]
  /** Stable id of this node; job leases are recorded as `<node id>:<boot id>:<worker>`. */
  nodeId: string
  /** SPEC "Rate limits" (DESIGN "Rate limits"); 0 turns a limit off. */
  rateLimits: RateLimits
  webhooks: WebhookSettings
  idps: IdpSettings
  /** A workspace's own SMTP servers (DESIGN "SMTP"). */
  smtp: SmtpSettings
  billing: BillingSettings
}

/** DESIGN "SMTP": where a workspace's own mail server may be. */
interface SmtpSettings {
  /** Private, loopback, link-local and metadata addresses (`SMTP_ALLOW_PRIVATE`); refused by default. */
  allowPrivate: boolean
}

export type PlanName = 'free' | 'pro' | 'enterprise'

/** What a plan includes (DESIGN "Billing"): monthly active users, and the price of each one beyond. */
interface PlanTerms {
  includedMau: number
  /** Cents per monthly active user beyond `includedMau`; 0 on Free, which stops sign-ups instead. */
  overageCents: number
}

/** The Stripe account billing talks to; absent when STRIPE_SECRET_KEY is unset. */
export interface StripeSettings {
  secretKey: string
  /** Verifies the inbound events (`Stripe-Signature`) of `POST /v1/webhooks/payments`. */
  webhookSecret: string
  /** The recurring price of each plan; enterprise's only to recognise subscriptions sales made. */
  prices: { free: string; pro: string; enterprise: string | null }
  /** Where the SDK sends its requests (`STRIPE_API_HOST`): Stripe's own API unless told. */
  api: { host: string; port: number; protocol: 'http' | 'https' }
  /** The Billing Meter event name MAU counts are reported under (`STRIPE_MAU_METER_EVENT`); null: none. */
  mauMeterEvent: string | null
}

/** DESIGN "Billing": the plans always; Stripe only when configured (else every workspace is Free). */
export interface BillingSettings {
  plans: Record<PlanName, PlanTerms>
  stripe: StripeSettings | null
  /** How long a workspace whose payment failed keeps its plan (`BILLING_GRACE_DAYS`). */
  graceDays: number
}

type NamedIdpType = 'google' | 'github' | 'microsoft'
export type IdpType = NamedIdpType | 'oidc'

/**
 * Where a named provider signs users in. `issuer` and `jwks` for the OpenID Connect ones (Microsoft's
 * issuer holds `{tenantid}`: its `common` endpoints sign with the user's tenant as issuer), `api` for
 * GitHub (user and emails).
 */
export interface NamedIdpEndpoints {
  authorization: string
  token: string
  issuer?: string
  jwks?: string
  api?: string
}

/** An IdP of the platform instance (the dashboard's own sign-in), from the environment. */
interface PlatformIdp {
  type: IdpType
  name: string
  clientId: string
  clientSecret: string
  /** `PLATFORM_OIDC_ISSUER`; null for the named ones. */
  issuer: string | null
}

/** DESIGN "IdPs". */
interface IdpSettings {
  /** Issuers a workspace's `oidc` IdP may name (`IDPS_ALLOW_HTTP`, `IDPS_ALLOW_PRIVATE`): https and public by default. */
  allowHttp: boolean
  allowPrivate: boolean
  /** The one table of the named providers' endpoints; `IDP_ENDPOINTS` (JSON) replaces entries of it. */
  endpoints: Record<NamedIdpType, NamedIdpEndpoints>
  /** `GOOGLE_CLIENT_ID`/`_SECRET`, `GITHUB_…`, `MICROSOFT_…`, `PLATFORM_OIDC_*`: in that order. */
  platform: PlatformIdp[]
}

const NAMED_IDP_ENDPOINTS: Record<NamedIdpType, NamedIdpEndpoints> = {
  google: {
    issuer: 'https://accounts.google.com',
    authorization: 'https://accounts.google.com/o/oauth2/v2/auth',
    token: 'https://oauth2.googleapis.com/token',
    jwks: 'https://www.googleapis.com/oauth2/v3/certs',
  },
  microsoft: {
    issuer: 'https://login.microsoftonline.com/{tenantid}/v2.0',
    authorization: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize',
    token: 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
    jwks: 'https://login.microsoftonline.com/common/discovery/v2.0/keys',
  },
  github: {
    authorization: 'https://github.com/login/oauth/authorize',
    token: 'https://github.com/login/oauth/access_token',
    api: 'https://api.github.com',
  },
}

const NAMED_IDPS: { type: NamedIdpType; prefix: string; name: string }[] = [
  { type: 'google', prefix: 'GOOGLE', name: 'Google' },
  { type: 'github', prefix: 'GITHUB', name: 'GitHub' },
  { type: 'microsoft', prefix: 'MICROSOFT', name: 'Microsoft' },
]

/** `IDP_ENDPOINTS`: `{"github": {"authorization": "…", …}, …}`, each entry complete, http(s) URLs. */
function idpEndpoints(env: Env): Record<NamedIdpType, NamedIdpEndpoints> {
  const raw = env.IDP_ENDPOINTS
  if (!raw) return NAMED_IDP_ENDPOINTS
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    throw new ConfigError('IDP_ENDPOINTS', 'expected a JSON object')
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new ConfigError('IDP_ENDPOINTS', 'expected a JSON object')
  const table = { ...NAMED_IDP_ENDPOINTS }
  for (const [type, entry] of Object.entries(parsed)) {
    if (!(type in NAMED_IDP_ENDPOINTS)) throw new ConfigError('IDP_ENDPOINTS', `unknown provider "${type}"`)
    const need = Object.keys(NAMED_IDP_ENDPOINTS[type as NamedIdpType])
    const given = (entry ?? {}) as Record<string, unknown>
    const out: Record<string, string> = {}
    for (const key of need) {
      const value = given[key]
      if (typeof value !== 'string') throw new ConfigError('IDP_ENDPOINTS', `${type}.${key} is missing`)
      out[key] = key === 'issuer' ? value : httpUrl('IDP_ENDPOINTS', value)
    }
    table[type as NamedIdpType] = out as unknown as NamedIdpEndpoints
  }
  return table
}

/** The platform instance's IdPs: each one needs its id and its secret, or neither. */
function platformIdps(env: Env): PlatformIdp[] {
  const pair = (prefix: string) => {
    const id = env[`${prefix}_CLIENT_ID`] || ''
    const secret = env[`${prefix}_CLIENT_SECRET`] || ''
    if (!id !== !secret)
      throw new ConfigError(
        `${prefix}_CLIENT_${id ? 'SECRET' : 'ID'}`,
        `is required with ${prefix}_CLIENT_${id ? 'ID' : 'SECRET'}`,
      )
    return id ? { clientId: id, clientSecret: secret } : null
  }
  const out: PlatformIdp[] = []
  for (const named of NAMED_IDPS) {
    const credentials = pair(named.prefix)
    if (credentials) out.push({ type: named.type, name: named.name, issuer: null, ...credentials })
  }
  const oidc = pair('PLATFORM_OIDC')
  const issuer = env.PLATFORM_OIDC_ISSUER || ''
  if (!oidc !== !issuer)
    throw new ConfigError(
      'PLATFORM_OIDC_ISSUER',
      'goes with PLATFORM_OIDC_CLIENT_ID and PLATFORM_OIDC_CLIENT_SECRET',
    )
  if (oidc)
    out.push({
      type: 'oidc',
      name: str(env, 'PLATFORM_OIDC_NAME', 'Single sign-on'),
      issuer: httpUrl('PLATFORM_OIDC_ISSUER', issuer),
      ...oidc,
    })
  return out
}

/** `STRIPE_API_HOST`: an http(s) origin, its port implied by the scheme when absent. */
function stripeApi(env: Env): StripeSettings['api'] {
  const raw = env.STRIPE_API_HOST
  if (!raw) return { host: 'api.stripe.com', port: 443, protocol: 'https' }
  const url = new URL(httpUrl('STRIPE_API_HOST', raw))
  if (url.pathname !== '/' || url.username || url.password)
    throw new ConfigError('STRIPE_API_HOST', 'expected an origin such as https://api.stripe.com (no path)')
  const protocol = url.protocol === 'http:' ? 'http' : 'https'
  return { host: url.hostname, port: url.port ? Number(url.port) : protocol === 'http' ? 80 : 443, protocol }
}

/** A Stripe id or key of the form `<prefix>…`, or a clear error naming the variable. */
function stripeValue(env: Env, name: string, prefixes: string[]): string {
  const raw = env[name] ?? ''
  if (!raw) throw new ConfigError(name, 'is required with STRIPE_SECRET_KEY')
  if (!prefixes.some((p) => raw.startsWith(p)) || /\s/.test(raw))
    throw new ConfigError(name, `expected a value starting with ${prefixes.join(' or ')}`)
  return raw
}

/**
 * Billing (DESIGN "Billing"): without STRIPE_SECRET_KEY, none of the STRIPE_* variables is read and
 * billing is off. With it, the webhook secret and the Free and Pro prices are required.
 */
function billingSettings(env: Env): BillingSettings {
  const plans: Record<PlanName, PlanTerms> = {
    free: { includedMau: int(env, 'BILLING_FREE_INCLUDED_MAU', 1_000, 1, 100_000_000), overageCents: 0 },
    pro: {
      includedMau: int(env, 'BILLING_PRO_INCLUDED_MAU', 10_000, 1, 100_000_000),
      overageCents: int(env, 'BILLING_PRO_OVERAGE_CENTS', 2, 0, 100_000),
    },
    enterprise: {
      includedMau: int(env, 'BILLING_ENTERPRISE_INCLUDED_MAU', 100_000, 1, 1_000_000_000),
      overageCents: int(env, 'BILLING_ENTERPRISE_OVERAGE_CENTS', 1, 0, 100_000),
    },
  }
  const graceDays = int(env, 'BILLING_GRACE_DAYS', 7, 0, 90)
  if (!env.STRIPE_SECRET_KEY) return { plans, stripe: null, graceDays }
  const enterprise = env.STRIPE_PRICE_ENTERPRISE
    ? stripeValue(env, 'STRIPE_PRICE_ENTERPRISE', ['price_'])
    : null
  const meter = env.STRIPE_MAU_METER_EVENT || null
  if (meter !== null && !/^[A-Za-z0-9_.:-]{1,100}$/.test(meter))
    throw new ConfigError('STRIPE_MAU_METER_EVENT', 'expected 1 to 100 letters, digits, ".", "_", ":" or "-"')
  return {
    plans,
    graceDays,
    stripe: {
      secretKey: stripeValue(env, 'STRIPE_SECRET_KEY', ['sk_', 'rk_']),
      webhookSecret: stripeValue(env, 'STRIPE_WEBHOOK_SECRET', ['whsec_']),
      prices: {
        free: stripeValue(env, 'STRIPE_PRICE_FREE', ['price_']),
        pro: stripeValue(env, 'STRIPE_PRICE_PRO', ['price_']),
        enterprise,
      },
      api: stripeApi(env),
      mauMeterEvent: meter,
    },
  }
}

/** Outgoing webhooks (DESIGN "Webhooks", SPEC "Limits"). */
export interface WebhookSettings {
  /** `http://` endpoints too (`WEBHOOKS_ALLOW_HTTP`); https only by default. */
  allowHttp: boolean
  /** Private, loopback, link-local and metadata addresses (`WEBHOOKS_ALLOW_PRIVATE`); refused by default. */
  allowPrivate: boolean
  /** Deliveries per rolling minute to one endpoint (`WEBHOOK_RATE_PER_MINUTE`, SPEC: 100). */
  perMinute: number
  /** Deliveries in flight at once to one endpoint, across nodes (`WEBHOOK_ENDPOINT_CONCURRENCY`). */
  endpointConcurrency: number
}

export interface RateLimits {
  /** Control-plane calls per minute on one workspace (`RATE_LIMIT_WORKSPACE_PER_MINUTE`). */
  workspacePerMinute: number
  /** Control-plane calls per minute of one organisation, all its workspaces together. */
  organisationPerMinute: number
  /** Unauthenticated `/v1/auth/*` calls (and failed credentials) per minute from one client address. */
  addressPerMinute: number
  /** `tenants:batch` calls per minute on one workspace, apart from the control-plane limit. */
  batchPerMinute: number
  /** Identity-plane requests per second to one instance, and the burst it may take at once. */
  dataPlaneRps: number
  dataPlaneBurst: number
  /** The part of an instance's rate and burst one client address may take (DESIGN "Data plane fairness"). */
  dataPlaneAddressShare: number
  /** The part of an instance's burst kept for a browser's requests: the JSON endpoints cannot take it. */
  dataPlanePageReserve: number
}

/** A start-up failure the operator can fix: the CLI prints `gatehouse: <message>` and exits 2. */
export class StartupError extends Error {}

/** A bad environment value: the CLI prints `message` alone, never a stack trace. */
export class ConfigError extends StartupError {
  constructor(
    readonly variable: string,
    detail: string,
  ) {
    super(`invalid ${variable}: ${detail}`)
  }
}

type Env = Record<string, string | undefined>

function str(env: Env, name: string, fallback: string): string {
  const v = env[name]
  return v === undefined || v === '' ? fallback : v
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(name, `expected an integer from ${min} to ${max}, got "${raw}"`)
  }
  return Number(raw)
}

/** A decimal fraction such as `0.25`, from `min` to `max`. */
function fraction(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!/^\d+(?:\.\d+)?$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(name, `expected a decimal number from ${min} to ${max}, got "${raw}"`)
  }
  return Number(raw)
}

function httpUrl(name: string, raw: string): string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new ConfigError(name, `expected an absolute http(s) URL, got "${raw}"`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(name, `expected an http or https URL, got "${raw}"`)
  }
  if (url.search || url.hash) throw new ConfigError(name, 'must not carry a query or fragment')
  return raw.replace(/\/+$/, '')
}

function parseKey(raw: string): Buffer {
  const hex = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : null
  const key = hex ?? Buffer.from(raw, 'base64')
  if (key.length !== 32) {
    throw new ConfigError('SECRET_KEY', 'expected 32 bytes as 64 hex characters or base64')
  }
  return key
}

/**
 * DATABASE_URL: unset → SQLite in DATA_DIR; `postgres://` or `postgresql://` → PostgreSQL. Several
 * nodes must unseal the same secrets, so PostgreSQL needs SECRET_KEY (no per-node key file).
 */
function loadDatabaseUrl(env: Env): string | null {
  const raw = env.DATABASE_URL
  if (raw === undefined || raw === '') return null
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new ConfigError('DATABASE_URL', 'expected postgres://user:password@host:port/database')
  }
  if (!isPostgresUrl(raw) || !url.hostname) {
    throw new ConfigError(
      'DATABASE_URL',
      `expected a postgres:// or postgresql:// URL, got a ${url.protocol} URL`,
    )
  }
  if (!env.SECRET_KEY) {
    throw new ConfigError(
      'SECRET_KEY',
      'required with DATABASE_URL: every node must unseal the same secrets (32 bytes, hex or base64)',
    )
  }
  return raw
}

/** The master key: SECRET_KEY when set, else a key file generated once in DATA_DIR. */
function loadSecretKey(env: Env, dataDir: string): Buffer {
  const raw = env.SECRET_KEY
  if (raw) return parseKey(raw)
  const file = join(dataDir, 'master.key')
  if (existsSync(file)) {
    try {
      return parseKey(readFileSync(file, 'utf8').trim())
    } catch {
      throw new ConfigError('SECRET_KEY', `the key file ${file} is corrupt`)
    }
  }
  const key = randomBytes(32)
  writeFileSync(file, `${key.toString('hex')}\n`, { mode: 0o600 })
  chmodSync(file, 0o600)
  return key
}

function bool(env: Env, name: string): boolean | null {
  const raw = env[name]
  if (raw === undefined || raw === '') return null
  if (raw !== 'true' && raw !== 'false') throw new ConfigError(name, `expected true or false, got "${raw}"`)
  return raw === 'true'
}

const LOOPBACK = ['127.0.0.0/8', '::1/128'].map((c) => parseCidr(c)!)

/** 127.0.0.0/8, ::1 or localhost: reachable from this machine only. */
function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase()
  if (bare === 'localhost') return true
  const address = parseIp(bare)
  return address !== null && LOOPBACK.some((cidr) => inCidr(address, cidr))
}

/**
 * The dev outbox is on by default where the links it keeps can only work on the developer's own
 * machine: a loopback BASE_URL without SMTP (DESIGN "Dev outbox"), whatever HOST binds (the README's
 * `npm start` listens on 0.0.0.0). Only the platform administrator's session reads it. `DEV_OUTBOX`
 * overrides.
 */
function devOutboxDefault(baseUrl: string, smtpUrl: string | null): boolean {
  return !smtpUrl && isLoopbackHost(new URL(baseUrl).hostname)
}

function cidrList(env: Env, name: string): Cidr[] {
  const entries = (env[name] ?? '').split(',').map((entry) => entry.trim())
  return entries
    .filter((entry) => entry !== '')
    .map((entry) => {
      const cidr = parseCidr(entry)
      if (!cidr) {
        throw new ConfigError(
          name,
          `expected comma-separated IPv4/IPv6 CIDRs (10.0.0.0/8, fd00::/8), got "${entry}"`,
        )
      }
      return cidr
    })
}

const NODE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/

/**
 * NODE_ID when set (an orchestrator's stable name for the node), else an id generated once into
 * DATA_DIR/node.id: it survives restarts with the data, so a node can tell its own earlier boot's
 * job leases from another node's. No `:` (it separates the parts of `locked_by`).
 */
function loadNodeId(env: Env, dataDir: string): string {
  const raw = env.NODE_ID
  if (raw) {
    if (!NODE_ID.test(raw))
      throw new ConfigError('NODE_ID', `expected 1 to 63 letters, digits, ".", "_" or "-", got "${raw}"`)
    return raw
  }
  const file = join(dataDir, 'node.id')
  try {
    // `wx`: two processes starting on one DATA_DIR agree on the first id written.
    writeFileSync(file, `${newNodeId()}\n`, { flag: 'wx', mode: 0o600 })
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e
  }
  const id = readFileSync(file, 'utf8').trim()
  if (!NODE_ID.test(id)) throw new ConfigError('NODE_ID', `the node id file ${file} is corrupt`)
  return id
}

const newNodeId = () => `node-${randomBytes(8).toString('hex')}`

/** HOST and PORT alone, read without touching the disk (`gatehouse healthcheck` needs no write access). */
export function loadListenConfig(env: Env = process.env): Pick<Config, 'host' | 'port'> {
  return { host: str(env, 'HOST', '0.0.0.0'), port: int(env, 'PORT', 8080, 0, 65535) }
}

/**
 * Only where the SQLite store lives, for `store copy`: unlike loadConfig it creates nothing in
 * DATA_DIR (no master key: a copy moves sealed values as they are and needs none).
 */
export function loadSqliteLocation(env: Env = process.env): Pick<Config, 'dataDir' | 'databasePath'> {
  if (env.DATABASE_URL) {
    throw new StartupError(
      'store copy reads the SQLite store in DATA_DIR: unset DATABASE_URL and pass the target with --to',
    )
  }
  const dataDir = resolve(str(env, 'DATA_DIR', './data'))
  const databasePath = join(dataDir, 'gatehouse.db')
  if (!existsSync(databasePath)) throw new StartupError(`no SQLite store at ${databasePath}: set DATA_DIR`)
  return { dataDir, databasePath }
}

const LOG_LEVELS: LogLevel[] = ['debug', 'info', 'warn', 'error']

export function loadConfig(env: Env = process.env): Config {
  const { host, port } = loadListenConfig(env)
  const baseUrl = httpUrl('BASE_URL', str(env, 'BASE_URL', `http://localhost:${port}`))
  const logLevel = str(env, 'LOG_LEVEL', 'info') as LogLevel
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `expected one of ${LOG_LEVELS.join(', ')}, got "${env.LOG_LEVEL}"`)
  }
  const authUrlTemplate = str(env, 'AUTH_URL_TEMPLATE', `${baseUrl}/i/{workspace_id}`)
  if (!authUrlTemplate.includes('{workspace_id}')) {
    throw new ConfigError('AUTH_URL_TEMPLATE', 'must contain the placeholder {workspace_id}')
  }
  httpUrl('AUTH_URL_TEMPLATE', authUrlTemplate.replace('{workspace_id}', 'platform'))
  const smtpUrl = env.SMTP_URL || null
  if (smtpUrl && !/^smtps?:\/\//.test(smtpUrl)) {
    throw new ConfigError('SMTP_URL', 'expected smtp://user:pass@host:port or smtps://…')
  }

  const databaseUrl = loadDatabaseUrl(env)
  const dataDir = resolve(str(env, 'DATA_DIR', './data'))
  try {
    // Owner only: it holds the database and the master key file.
    mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  } catch (e) {
    throw new ConfigError('DATA_DIR', `cannot create ${dataDir}: ${(e as Error).message}`)
  }
  try {
    // An existing directory (an older install's ./data at 0755) is narrowed too, when it is ours.
    if (statSync(dataDir).uid === process.getuid?.()) chmodSync(dataDir, 0o700)
  } catch {
    // A directory we cannot change (a read-only mount) is the operator's to secure.
  }

  const devOutbox = bool(env, 'DEV_OUTBOX') ?? devOutboxDefault(baseUrl, smtpUrl)

  return {
    baseUrl,
    host,
    port,
    dataDir,
    databasePath: join(dataDir, 'gatehouse.db'),
    databaseUrl,
    databasePoolSize: int(env, 'DATABASE_POOL_SIZE', 10, 1, 1000),
    secretKey: loadSecretKey(env, dataDir),
    logLevel,
    jobWorkers: int(env, 'JOB_WORKERS', 1, 1, 64),
    jobConcurrency: int(env, 'JOB_CONCURRENCY', 32, 1, 1000),
    jobLeaseSeconds: int(env, 'JOB_LEASE_SECONDS', 60, 1, 86400),
    authUrlTemplate,
    smtpUrl,
    smtpFrom: str(env, 'SMTP_FROM', 'Gatehouse <no-reply@localhost>'),
    devOutbox,
    trustedProxies: cidrList(env, 'TRUSTED_PROXIES'),
    nodeId: loadNodeId(env, dataDir),
    rateLimits: {
      workspacePerMinute: int(env, 'RATE_LIMIT_WORKSPACE_PER_MINUTE', 60, 0, 1_000_000),
      organisationPerMinute: int(env, 'RATE_LIMIT_ORGANISATION_PER_MINUTE', 600, 0, 10_000_000),
      addressPerMinute: int(env, 'RATE_LIMIT_ADDRESS_PER_MINUTE', 60, 0, 1_000_000),
      batchPerMinute: int(env, 'RATE_LIMIT_BATCH_PER_MINUTE', 5, 0, 1_000_000),
      dataPlaneRps: int(env, 'RATE_LIMIT_DATA_PLANE_RPS', 50, 0, 1_000_000),
      dataPlaneBurst: int(env, 'RATE_LIMIT_DATA_PLANE_BURST', 200, 1, 10_000_000),
      dataPlaneAddressShare: fraction(env, 'RATE_LIMIT_DATA_PLANE_ADDRESS_SHARE', 0.25, 0.01, 1),
      dataPlanePageReserve: fraction(env, 'RATE_LIMIT_DATA_PLANE_PAGE_RESERVE', 0.25, 0, 0.9),
    },
    idps: {
      allowHttp: bool(env, 'IDPS_ALLOW_HTTP') ?? false,
      allowPrivate: bool(env, 'IDPS_ALLOW_PRIVATE') ?? false,
      endpoints: idpEndpoints(env),
      platform: platformIdps(env),
    },
    smtp: { allowPrivate: bool(env, 'SMTP_ALLOW_PRIVATE') ?? false },
    webhooks: {
      allowHttp: bool(env, 'WEBHOOKS_ALLOW_HTTP') ?? false,
      allowPrivate: bool(env, 'WEBHOOKS_ALLOW_PRIVATE') ?? false,
      perMinute: int(env, 'WEBHOOK_RATE_PER_MINUTE', 100, 1, 1_000_000),
      endpointConcurrency: int(env, 'WEBHOOK_ENDPOINT_CONCURRENCY', 8, 1, 1000),
    },
    billing: billingSettings(env),
  }
}
