import { Elysia, t } from 'elysia'
import { VERSION } from '../../config'
import type { Core } from '../../core'
import type { NodeLock } from '../../db/serve-lock'

const HealthOut = t.Object(
  {
    status: t.String(),
    version: t.String(),
    store: t.String(),
    database: t.String(),
    node_lock: t.Optional(t.String()),
    warnings: t.Optional(
      t.Array(t.String(), {
        description: 'What this node noticed of its set-up that its operator should fix; absent when nothing',
      }),
    ),
  },
  {
    description: 'Every value is a string, but `warnings`, a list of strings present when there is one',
    examples: [{ status: 'ok', version: VERSION, store: 'sqlite', database: 'ok', node_lock: 'held' }],
  },
)

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

/**
 * `status` is `degraded` when the database does not answer (503: take the node out) or when the
 * node lost its node lock to another process with its node id (200: it still serves requests and
 * runs jobs, but takes back none of an earlier boot's; an operator stops the other process).
 * `warnings` (issue 56) lists what the node logged for its operator to fix, such as a proxy
 * missing from TRUSTED_PROXIES; the node still serves, so `status` stays as it is.
 */
export const healthRoutes = ({ store, warnings }: Core, nodeLock?: Pick<NodeLock, 'state'>) =>
  new Elysia({ name: 'health' }).get(
    '/healthz',
    async ({ set }) => {
      const database = (await storeAnswers(store)) ? 'ok' : 'unavailable'
      if (database !== 'ok') set.status = 503
      const lock = nodeLock?.state
      const noticed = warnings.list()
      return {
        status: database === 'ok' && lock !== 'lost' ? 'ok' : 'degraded',
        version: VERSION,
        store: store.dialect,
        database,
        ...(lock ? { node_lock: lock } : {}),
        ...(noticed.length ? { warnings: noticed } : {}),
      }
    },
    {
      response: { 200: HealthOut, 503: HealthOut },
      detail: { tags: ['health'], summary: 'Liveness, store and node lock check' },
    },
  )
