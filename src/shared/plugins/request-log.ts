import { Elysia } from 'elysia'
import type { Logger } from '../logger'

const INCOMING_ID = /^[A-Za-z0-9._:-]{1,128}$/
const started = new WeakMap<Request, { t: number; id: string }>()

/** The request's id: a sane incoming `X-Request-Id` is kept, so a proxy's id threads through. */
export function requestIdFor(request: Request): string {
  const incoming = request.headers.get('x-request-id')
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
export const requestLogPlugin = (log: Logger) =>
  new Elysia({ name: 'request-log' })
    .onRequest(({ request, set }) => {
      const id = requestIdFor(request)
      started.set(request, { t: performance.now(), id })
      set.headers['x-request-id'] = id
    })
    .onAfterResponse({ as: 'global' }, ({ request, set, path, responseValue }) => {
      const s = started.get(request)
      const status = responseValue instanceof Response ? responseValue.status : set.status
      logRequest(log, s?.id, request.method, path, typeof status === 'number' ? status : 200, s?.t)
    })
