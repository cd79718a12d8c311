import { Elysia, t } from 'elysia'
import { VERSION } from '../../config'
import type { Core } from '../../core'

const HealthOut = t.Record(t.String(), t.String(), {
  description: 'Every value is a string',
  examples: [{ status: 'ok', version: VERSION, database: 'ok' }],
})

export const healthRoutes = ({ db }: Core) => {
  const ping = db.$client.prepare('SELECT 1')
  return new Elysia({ name: 'health' }).get(
    '/healthz',
    ({ set }) => {
      let database = 'ok'
      try {
        ping.get()
      } catch {
        database = 'unavailable'
        set.status = 503
      }
      return { status: database === 'ok' ? 'ok' : 'degraded', version: VERSION, database }
    },
    {
      response: { 200: HealthOut, 503: HealthOut },
      detail: { tags: ['health'], summary: 'Liveness and store check' },
    },
  )
}
