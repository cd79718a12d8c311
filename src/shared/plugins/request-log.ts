import { Elysia } from 'elysia'
import type { Logger } from '../logger'

const INCOMING_ID = /^[A-Za-z0-9._:-]{1,128}$/
const started = new WeakMap<Request, { t: number; id: string }>()

/**
 * Every response carries `X-Request-Id` (a sane incoming one is kept, so a proxy's id threads
 * through), and every request leaves one structured access-log line.
 */
export const requestLogPlugin = (log: Logger) =>
  new Elysia({ name: 'request-log' })
    .onRequest(({ request, set }) => {
      const incoming = request.headers.get('x-request-id')
      const id = incoming && INCOMING_ID.test(incoming) ? incoming : crypto.randomUUID()
      started.set(request, { t: performance.now(), id })
      set.headers['x-request-id'] = id
    })
    .onAfterResponse({ as: 'global' }, ({ request, set, path, responseValue }) => {
      const s = started.get(request)
      const status = responseValue instanceof Response ? responseValue.status : set.status
      log.info('request', {
        request_id: s?.id,
        method: request.method,
        path,
        status: typeof status === 'number' ? status : 200,
        duration_ms: s ? Math.round((performance.now() - s.t) * 100) / 100 : undefined,
      })
    })

export const requestIdOf = (request: Request): string | undefined => started.get(request)?.id
