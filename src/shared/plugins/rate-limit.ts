import type { Server } from 'bun'
import { Elysia } from 'elysia'
import type { Decision } from '../../limits/decision'
import type { Check, Limiter } from '../../limits/limiter'
import { addressBucket } from '../client-address'
import { AppError } from '../errors'

/** The batch routes (`…/tenants:batch`), limited on their own bucket. */
const BATCH_PATH = /^\/v1\/workspaces\/[^/]+\/[a-z-]+:batch$/

/** SPEC "Limits": the headers of the bucket closest to its limit, on every control-plane response. */
export function rateLimitHeaders(d: Decision): Record<string, string> {
  return {
    'x-ratelimit-limit': String(d.limit),
    'x-ratelimit-remaining': String(d.remaining),
    'x-ratelimit-reset': String(d.resetAt),
  }
}

/** A refused bucket's 429, saying `message`: `Retry-After` in whole seconds, and the bucket's headers. */
const refusal = (d: Decision, message: string) =>
  new AppError('RATE_LIMITED', 429, message, { 'retry-after': String(d.retryAfter), ...rateLimitHeaders(d) })

/** The API's 429 of a refused bucket: which limit it was, and when to retry. */
export const rateLimited = (d: Decision): AppError =>
  refusal(d, `Rate limit reached: ${d.limit} requests per minute per ${d.name}. Retry in ${d.retryAfter} s.`)

/** The dashboard's 429, shown next to the form a person sent: how long to wait, in their words. */
export const changesRefused = (d: Decision): AppError =>
  refusal(d, `Too many changes in a minute — try again in ${d.retryAfter} s.`)

/** What a refused bucket throws: the API's 429 or the dashboard's. */
type Refusal = (d: Decision) => AppError

/**
 * Takes one request from every bucket at once, or from none: a refusal is a 429,
 * thrown; otherwise the headers of the tightest bucket (none when every bucket is off).
 */
export function takeAll(
  limiter: Limiter,
  checks: readonly Check[],
  refuse: Refusal = rateLimited,
): Record<string, string> | Promise<Record<string, string>> {
  const decisions = limiter.takeAll(checks)
  return decisions instanceof Promise
    ? decisions.then((d) => headersOf(d, refuse))
    : headersOf(decisions, refuse)
}

/** The headers of a check that passed, or its 429. */
function headersOf(decisions: Decision[], refuse: Refusal): Record<string, string> {
  if (!decisions.length) return {}
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
  clientIp: (request: Request, server: Server<unknown> | null) => string | null,
) {
  return new Elysia({ name: 'address-limit' }).onRequest(async ({ request, server, set }) => {
    const path = new URL(request.url).pathname
    if (!path.startsWith('/v1/auth/') || path === '/v1/auth/me') return
    Object.assign(
      set.headers,
      await takeAll(limiter, [['address', addressBucket(clientIp(request, server) ?? '')]]),
    )
  })
}

/**
 * Who calls, as the limits read it: access's `Principal` satisfies it (shared/ imports nothing of
 * access, ARCHITECTURE "walls").
 */
type LimitedCaller = { kind: 'user'; account: { id: string } } | { kind: 'key'; key: { workspaceId: string } }

/**
 * What the guard hands its `limit` once it knows who calls (null: credentials that failed). `P` is
 * access's `Principal`, declared here because shared/ imports nothing of access.
 */
export interface LimitedCall<W, P> {
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
  findAccess: (workspaceId: string, principal: P) => Promise<{ workspace: W } | undefined>,
) {
  // Not async: on SQLite a call's check completes at once, and this runs on every guarded call.
  return ({ request, principal, workspace, ip }: LimitedCall<W, P>) => {
    // The path without parsing the URL again: after `scheme://host`.
    const url = request.url
    const query = url.indexOf('?')
    const path = url.slice(url.indexOf('/', url.indexOf('//') + 2), query < 0 ? undefined : query)
    const dashboard = path.startsWith('/app/')
    if (dashboard ? !WRITES.has(request.method) : !path.startsWith('/v1/')) return {}
    const refuse = dashboard ? changesRefused : rateLimited
    if (!principal) return takeAll(limiter, [['address', addressBucket(ip ?? '')]], refuse)
    // SPEC: batches have their own budget, counted apart from the control-plane limit.
    if (workspace && BATCH_PATH.test(path)) return takeAll(limiter, [['batch', workspace.id]])
    const take = (organisation: string | undefined) => {
      const checks: Check[] = []
      if (workspace) checks.push(['workspace', workspace.id])
      if (organisation) checks.push(['organisation', organisation])
      return takeAll(limiter, checks, refuse)
    }
    if (workspace) return take(workspace.ownerId)
    if (principal.kind === 'user') return take(principal.account.id)
    return findAccess(principal.key.workspaceId, principal).then((access) => take(access?.workspace.ownerId))
  }
}
