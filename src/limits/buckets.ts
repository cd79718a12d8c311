import type { RateLimits, WebhookSettings } from '../config'

const MINUTE_MS = 60_000

/**
 * A per-minute budget counted where every node sees it (GCRA: the shared `rate_limits` table on
 * PostgreSQL, this process's memory on SQLite, where one process serves). `limit` 0: off.
 */
export interface SharedBucket {
  kind: 'shared'
  /** What the 429 names: `workspace`, `organisation`, … */
  name: string
  /** A key's row is `<prefix>:<key>`: the buckets share one table. */
  prefix: string
  limit: number
  periodMs: number
}

/**
 * Per instance, per node, in memory: the rate and burst divided by the live nodes (DESIGN "Rate
 * limits": a store round trip per request would cost more than the limit protects), a share per
 * client address, and a reserve of the burst that only a browser's pages may take. `rps` 0: off.
 */
export interface NodeBucket {
  kind: 'node'
  rps: number
  burst: number
  addressShare: number
  pageReserve: number
}

/**
 * Attempts counted before a slow check, in the store (`login_throttle`), exact across nodes: at
 * most `limit` attempts in flight or failed per window; reaching it in failures locks the key.
 */
interface AttemptBucket {
  kind: 'attempts'
  prefix: string
  limit: number
  windowMs: number
  /** How long a key stays locked once its failures reach the limit. */
  lockMs: number
}

/** Requests per rolling window of whole seconds, counted in the store (`webhook_rate`) in the caller's transaction. */
export interface WindowBucket {
  kind: 'window'
  limit: number
  seconds: number
  /** Requests of a key in flight at once, counted by the caller. */
  concurrency: number
}

type Bucket = SharedBucket | NodeBucket | AttemptBucket | WindowBucket

/** What an attempt bucket may be given per call instead of its own rule (an instance's lockout policy). */
export type AttemptRule = Pick<AttemptBucket, 'limit' | 'windowMs' | 'lockMs'>

const perMinute = (name: string, prefix: string, limit: number): SharedBucket => ({
  kind: 'shared',
  name,
  prefix,
  limit,
  periodMs: MINUTE_MS,
})

const attempts = (prefix: string, limit: number, minutes: number): AttemptBucket => ({
  kind: 'attempts',
  prefix,
  limit,
  windowMs: minutes * MINUTE_MS,
  lockMs: minutes * MINUTE_MS,
})

/**
 * The hosted pages' brute-force protection, the same on every install. The account's is the
 * default login policy's lock (5 failures in 15 minutes); an instance's policy passes its own rule.
 */
export const ATTEMPT_BUCKETS = {
  signInAccount: attempts('acct', 5, 15),
  signInAddress: attempts('ip', 30, 15),
  // Reset and verification mails per address: every mail takes a slot, none is given back.
  resetMail: attempts('reset', 3, 15),
  verifyMail: attempts('verify', 3, 15),
}

/**
 * Every rate the platform counts, by name: the one table their limits are read from (SPEC
 * "Limits", DESIGN "Rate limits", "Data plane fairness", "Webhook delivery"; `RATE_LIMIT_*` and
 * `WEBHOOK_*` set them).
 */
export function limitBuckets(config: { rateLimits: RateLimits; webhooks: WebhookSettings }) {
  const r = config.rateLimits
  return {
    // The control plane: a workspace's calls and its organisation's (the owning account's).
    workspace: perMinute('workspace', 'ws', r.workspacePerMinute),
    organisation: perMinute('organisation', 'org', r.organisationPerMinute),
    /** Unauthenticated `/v1/auth/*` calls and failed credentials, per client address. */
    address: perMinute('client address', 'addr', r.addressPerMinute),
    /** `…:batch` calls of a workspace, apart from its control-plane budget. */
    batch: perMinute('workspace (batch)', 'batch', r.batchPerMinute),
    dataPlane: {
      kind: 'node',
      rps: r.dataPlaneRps,
      burst: r.dataPlaneBurst,
      addressShare: r.dataPlaneAddressShare,
      pageReserve: r.dataPlanePageReserve,
    } satisfies NodeBucket,
    ...ATTEMPT_BUCKETS,
    /** Webhook deliveries to one endpoint: a rolling minute (61 whole seconds cover every 60-second window), and a cap in flight. */
    webhookEgress: {
      kind: 'window',
      limit: config.webhooks.perMinute,
      seconds: 61,
      concurrency: config.webhooks.endpointConcurrency,
    } satisfies WindowBucket,
  } satisfies Record<string, Bucket>
}

export type LimitBuckets = ReturnType<typeof limitBuckets>
export type BucketName = keyof LimitBuckets
/** The names of the buckets of one kind. */
export type BucketsOf<K extends Bucket['kind']> = {
  [N in BucketName]: LimitBuckets[N]['kind'] extends K ? N : never
}[BucketName]

/** An attempt bucket's key for someone (`who`: an address, an email) at an instance. */
export const instanceKey = (instanceId: string, who: string) => `${instanceId}:${who}`
