// `apps-list`, `apps-list-limiter`, `scoped-read-machine-vs-session`: GET /v1/workspaces/{id}/apps of
// a workspace with APPS_LISTED apps made through the API, read with the owner's dashboard session or
// with a machine key's access token; every answer must list them all.
import { gatehouseWithOwnedWorkspace } from '../fixtures'
import { expectTotal } from '../load'
import { createMachineKey, machineToken } from '../machine-keys'
import type { Options } from '../options'
import { httpSide, type SideSpec, throughput } from '../scenario'
import { BENCH_RATE_LIMITS } from '../setup'
import { bareHello } from './healthz'

const APPS_LISTED = 5

/** Every limit off: what the limiter's cost is measured against. */
const LIMITER_OFF = Object.fromEntries(
  Object.keys(BENCH_RATE_LIMITS)
    .filter((k) => k !== 'RATE_LIMIT_DATA_PLANE_BURST')
    .map((k) => [k, '0']),
)

/**
 * The read as `caller`. For a machine token, or with `seedKey`, a workspace:read key is created and
 * exchanged once, so that both sides of a comparison hold the same rows and ran the same setup.
 */
function appsList(
  name: string,
  caller: 'session' | 'machine token',
  more: { seedKey?: boolean; env?: Record<string, string> } = {},
): SideSpec {
  return {
    name,
    async start(opts: Options) {
      const { gh, session, ws } = await gatehouseWithOwnedWorkspace(opts, APPS_LISTED, more.env)
      let headers: Record<string, string> = { cookie: session.cookie }
      try {
        if (caller === 'machine token' || more.seedKey) {
          const file = await createMachineKey(gh.url, session, ws.workspaceId, ['workspace:read'])
          const token = await machineToken(file)
          if (caller === 'machine token') headers = { authorization: `Bearer ${token}` }
        }
      } catch (e) {
        await gh.stop()
        throw e
      }
      const url = `${gh.url}/v1/workspaces/${ws.workspaceId}/apps`
      return httpSide(name, gh, () => new Request(url, { headers }), expectTotal(APPS_LISTED), opts)
    },
  }
}

const route = `GET /v1/workspaces/{id}/apps (${APPS_LISTED} apps)`

export const appsListScenario = throughput({
  description: `${route} with a dashboard session cookie (session lookup, owner-scoped workspace lookup) through the full server vs a bare Bun.serve hello handler`,
  minRate: 5_000,
  baseline: bareHello,
  subject: appsList('gatehouse: apps-list', 'session'),
})

export const appsListLimiter = throughput({
  description: `${route} with a dashboard session, the control-plane limiter on (every call takes from its workspace's and organisation's buckets, at limits it never reaches) vs the same server with every limit off (RATE_LIMIT_*=0)`,
  minRatio: 0.95,
  baseline: appsList('gatehouse: limiter off', 'session', { env: LIMITER_OFF }),
  subject: appsList('gatehouse: limiter on', 'session'),
})

export const scopedReadMachineVsSession = throughput({
  description: `${route}, scope workspace:read, with a machine key's access token (ES256 JWT verified locally) vs the owner's dashboard session cookie (session, account, workspace and role from the store); both servers set up alike (a machine key exchanged once on each)`,
  minRatio: 0.9,
  baseline: appsList('gatehouse: session cookie', 'session', { seedKey: true }),
  subject: appsList('gatehouse: machine token', 'machine token'),
})
