import type { Server } from 'bun'
import { Elysia } from 'elysia'
import type { RateLimits } from '../../config'
import type { Limiter, RateDecision, RateRule } from '../../limits/limiter'
import { addressBucket } from '../client-address'
import { AppError } from '../errors'

const MINUTE_MS = 60_000
/** The batch routes (`…/tenants:batch`), limited on their own bucket. */
const BATCH_PATH = /^\/v1\/workspaces\/[^/]+\/[a-z-]+:batch$/

/** SPEC "Limits": the headers of the bucket closest to its limit, on every control-plane response. */
export function rateLimitHeaders(d: RateDecision): Record<string, string> {
  return {
    'x-ratelimit-limit': String(d.rule.limit),
    'x-ratelimit-remaining': String(d.remaining),
    'x-ratelimit-reset': String(d.resetAt),
  }
}

/** A refused bucket's 429, saying `message`: `Retry-After` in whole seconds, and the bucket's headers. */
const refusal = (d: RateDecision, message: string) =>
  new AppError('RATE_LIMITED', 429, message, { 'retry-after': String(d.retryAfter), ...rateLimitHeaders(d) })

/** The API's 429 of a refused bucket: which limit it was, and when to retry. */
export const rateLimited = (d: RateDecision): AppError =>
  refusal(
    d,
    `Rate limit reached: ${d.rule.limit} requests per minute per ${d.rule.name}. Retry in ${d.retryAfter} s.`,
  )

/** The dashboard's 429, shown next to the form a person sent: how long to wait, in their words. */
export const changesRefused = (d: RateDecision): AppError =>
  refusal(d, `Too many changes in a minute — try again in ${d.retryAfter} s.`)

/** What a refused bucket throws: the API's 429 or the dashboard's. */
type Refusal = (d: RateDecision) => AppError

/** The per-minute rules of the control plane, from configuration; a 0 turns one off. */
export function controlPlaneRules(limits: RateLimits) {
  const perMinute = (name: string, limit: number): RateRule | null =>
    limit > 0 ? { name, limit, periodMs: MINUTE_MS } : null
  return {
    workspace: perMinute('workspace', limits.workspacePerMinute),
    organisation: perMinute('organisation', limits.organisationPerMinute),
    address: perMinute('client address', limits.addressPerMinute),
    batch: perMinute('workspace (batch)', limits.batchPerMinute),
  }
}

/**
 * Takes one request from every bucket at once, or from none: a refusal is a 429,
 * thrown; otherwise the headers of the tightest bucket. A rule of null is a limit turned off.
 */
export function takeAll(
  limiter: Limiter,
  buckets: [key: string, rule: RateRule | null][],
  refuse: Refusal = rateLimited,
): Record<string, string> | Promise<Record<string, string>> {
  const on = buckets.filter((b): b is [string, RateRule] => b[1] !== null)
  if (!on.length) return {}
  const decisions = limiter.take(on)
  return decisions instanceof Promise
    ? decisions.then((d) => headersOf(d, refuse))
    : headersOf(decisions, refuse)
}

/** The headers of a check that passed, or its 429. */
function headersOf(decisions: RateDecision[], refuse: Refusal): Record<string, string> {
  const refused = decisions.find((d) => !d.allowed)
  if (refused) throw refuse(refused)
  const tightest = decisions.reduce((a, b) => (b.remaining < a.remaining ? b : a))
  return rateLimitHeaders(tightest)
}

/**
 * Unauthenticated `/v1/auth/*` routes (login, callback, logout, the device flow, the token exchange)
 * count per client address, before any other work. `/v1/auth/me` is the guard's: its caller is known.
 */
export function addressLimitPlugin(
  limiter: Limiter,
  limits: RateLimits,
  clientIp: (request: Request, server: Server<unknown> | null) => string | null,
) {
  const { address } = controlPlaneRules(limits)
  return new Elysia({ name: 'address-limit' }).onRequest(async ({ request, server, set }) => {
    const path = new URL(request.url).pathname
    if (!path.startsWith('/v1/auth/') || path === '/v1/auth/me') return
    Object.assign(
      set.headers,
      await takeAll(limiter, [[`addr:${addressBucket(clientIp(request, server) ?? '')}`, address]]),
    )
  })
}

/**
 * Who calls, as the limits read it: access's `Principal` satisfies it (shared/ imports nothing of
 * access, ARCHITECTURE "walls").
 */
type LimitedCaller = { kind: 'user'; account: { id: string } } | { kind: 'key'; key: { workspaceId: string } }

/** What the guard hands its `limit` once it knows who calls (null: credentials that failed). */
interface LimitedCall<W, P> {
  request: Request
  principal: P | null
  workspace?: W
  ip: string | null
}

/** The methods of a dashboard form that changes something (htmx's hx-post, hx-delete, …). */
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/**
 * The guard's rate limits of `/v1` (DESIGN "Rate limits"): a call on a workspace counts against that
 * workspace and its organisation (the owning account), any other identified call against the
 * caller's organisation (a key's: its workspace's owner), and a call whose credentials failed
 * against its client address. A batch call counts only against the workspace's batch bucket.
 * Dashboard writes (`/app/…`) count exactly as the API call they stand for (DESIGN "Dashboard
 * writes"), in the same buckets; their 429 is the dashboard's message. Dashboard pages count
 * nowhere: reading spends no one's budget, and the status partial, polled every 3 s while a
 * workspace is provisioned, must never be refused.
 */
export function controlPlaneLimit<W extends { id: string; ownerId: string }, P extends LimitedCaller>(
  limiter: Limiter,
  limits: RateLimits,
  findAccess: (workspaceId: string, principal: P) => Promise<{ workspace: W } | undefined>,
) {
  const rules = controlPlaneRules(limits)
  // Not async: on SQLite a call's check completes at once, and this runs on every guarded call.
  return ({ request, principal, workspace, ip }: LimitedCall<W, P>) => {
    // The path without parsing the URL again: after `scheme://host`.
    const url = request.url
    const query = url.indexOf('?')
    const path = url.slice(url.indexOf('/', url.indexOf('//') + 2), query < 0 ? undefined : query)
    const dashboard = path.startsWith('/app/')
    if (dashboard ? !WRITES.has(request.method) : !path.startsWith('/v1/')) return {}
    const refuse = dashboard ? changesRefused : rateLimited
    if (!principal) return takeAll(limiter, [[`addr:${addressBucket(ip ?? '')}`, rules.address]], refuse)
    // SPEC: batches have their own budget, counted apart from the control-plane limit.
    if (workspace && BATCH_PATH.test(path)) return takeAll(limiter, [[`batch:${workspace.id}`, rules.batch]])
    const take = (organisation: string | undefined) =>
      takeAll(
        limiter,
        [
          [`ws:${workspace?.id}`, workspace ? rules.workspace : null],
          [`org:${organisation}`, organisation ? rules.organisation : null],
        ],
        refuse,
      )
    if (workspace) return take(workspace.ownerId)
    if (principal.kind === 'user') return take(principal.account.id)
    return findAccess(principal.key.workspaceId, principal).then((access) => take(access?.workspace.ownerId))
  }
}
