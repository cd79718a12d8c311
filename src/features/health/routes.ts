import { Elysia, t } from 'elysia'
import { VERSION } from '../../config'
import type { Core } from '../../core'

const HealthOut = t.Record(t.String(), t.String(), {
  description: 'Every value is a string',
  examples: [{ status: 'ok', version: VERSION, store: 'sqlite', database: 'ok' }],
})

/** How long /healthz waits for the database before it says it is unavailable. */
const PING_TIMEOUT_MS = 2000

/** Resolves true when the store answered within PING_TIMEOUT_MS; never throws. */
async function storeAnswers(store: Core['store']): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS)
  })
  try {
    return await Promise.race([store.ping().then(() => true), timeout])
  } catch {
    return false
  } finally {
    clearTimeout(timer)
  }
}

export const healthRoutes = ({ store }: Core) =>
  new Elysia({ name: 'health' }).get(
    '/healthz',
    async ({ set }) => {
      const database = (await storeAnswers(store)) ? 'ok' : 'unavailable'
      if (database !== 'ok') set.status = 503
      return {
        status: database === 'ok' ? 'ok' : 'degraded',
        version: VERSION,
        store: store.dialect,
        database,
      }
    },
    {
      response: { 200: HealthOut, 503: HealthOut },
      detail: { tags: ['health'], summary: 'Liveness and store check' },
    },
  )
