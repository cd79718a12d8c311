import { Elysia } from 'elysia'
import { type Cidr, fromTrustedProxy } from '../client-address'
import type { Logger } from '../logger'

const INCOMING_ID = /^[A-Za-z0-9._:-]{1,128}$/
const started = new WeakMap<Request, { t: number; id: string }>()

/**
 * The request's id: our own, or the incoming `X-Request-Id` of a trusted proxy (TRUSTED_PROXIES),
 * when it is sane, so the proxy's id threads through. A client's own is not believed, as an edge
 * proxy would not: it could give its requests another request's id in the log. Nor is the header
 * read then (the first read of a request's headers copies them all, on every cached answer).
 */
export function requestIdFor(request: Request, fromProxy: boolean): string {
  const incoming = fromProxy ? request.headers.get('x-request-id') : null
  return incoming && INCOMING_ID.test(incoming) ? incoming : crypto.randomUUID()
}

/**
 * The one structured access-log line of a request. Positional: the identity plane's cached answers
 * log one per request, and the line is one template (`Logger.request`), no fields object.
 */
export function logRequest(
  log: Logger,
  id: string | undefined,
  method: string,
  path: string,
  status: number,
  startedAt: number | undefined,
): void {
  log.request(
    id,
    method,
    path,
    status,
    startedAt === undefined ? undefined : Math.round((performance.now() - startedAt) * 100) / 100,
  )
}

/**
 * Every control-plane response carries `X-Request-Id`, and every request leaves one access-log
 * line (the identity plane does the same for its requests, `IdentityBridge.handle`).
 */
export const requestLogPlugin = (log: Logger, trustedProxies: readonly Cidr[]) =>
  new Elysia({ name: 'request-log' })
    .onRequest(({ request, server, set }) => {
      const id = requestIdFor(request, fromTrustedProxy(request, server, trustedProxies))
      started.set(request, { t: performance.now(), id })
      set.headers['x-request-id'] = id
    })
    .onAfterResponse({ as: 'global' }, ({ request, set, path, responseValue }) => {
      const s = started.get(request)
      const status = responseValue instanceof Response ? responseValue.status : set.status
      logRequest(log, s?.id, request.method, path, typeof status === 'number' ? status : 200, s?.t)
    })
