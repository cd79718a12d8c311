// First: oidc-provider's runtime line is dropped before any module of the plane loads it.
import '../runtime-warning'
import type { Core } from '../../core'
import { createDataPlaneLimit } from '../../limits/data-plane'
import { preparePasswordChecks } from '../accounts'
import { brandOf } from '../branding'
import { platformIdps } from '../broker/platform-idps'
import { clientReads } from '../clients'
import { instanceAddressing, MEMO_MS, PLATFORM } from '../instances'
import { rehashLegacyPayloads } from '../legacy-payloads'
import { PLATFORM_LOGIN_POLICY } from '../login-policy'
import { hostedPages, pageContext } from '../pages/routes'
import { buildProvider, servedInstance } from '../provider'
import { type Caller, type FetchInit, IdentityBridge, type Route } from './bridge'
import type { Extensions } from './extension'
import { mountInstanceApp } from './instance-app'
import { servingStates } from './instance-states'
import { ensureInstanceKeys, loadInstance } from './keys'
import { InstancePool, stateReads } from './pool'

export type { Caller, Route }

export interface IdentityPlane {
  /** Sends a request to an instance in-process: the control plane's own calls (code exchange, device flow). */
  fetch(instanceId: string, path: string, init?: FetchInit, clientIp?: string): Promise<Response>
  /**
   * Where a request with this host and path goes: an instance's route, or null when it is the
   * control plane's. The same host and path always route alike (the front door remembers them).
   */
  route(host: string, pathname: string): Route | null
  /** The answer of a request routed to an instance; `url` when the front door parsed it already. */
  handle(request: Request, route: Route, caller: Caller, url?: URL): Promise<Response> | Response
  /** The instances served (tests reach the shared Provider through it). */
  pool: InstancePool
}

/**
 * The identity plane of this process: the platform instance ready, the Provider pool, the bridge,
 * each reading what the features lend it (`extensions`, composed once at start).
 */
export async function createIdentityPlane(core: Core, extensions: Extensions): Promise<IdentityPlane> {
  await rehashLegacyPayloads(core)
  await ensureInstanceKeys(core, PLATFORM)
  preparePasswordChecks()
  const addressing = instanceAddressing(core.config)
  // One per node: a node's reads ahead of every instance's clients are gathered together.
  const clients = clientReads(
    extensions.clients,
    extensions.grants.map((g) => g.type),
    extensions.builtInClients,
  )
  const pool = new InstancePool(
    core,
    (instanceId, keys, loaded) =>
      servedInstance(core, instanceId, addressing.prefixOf(instanceId), keys, clients, loaded),
    buildProvider(core, extensions),
    stateReads(servingStates(core)),
    (instanceId) => loadInstance(core, instanceId),
    async (instanceId) => {
      // External IdPs are offered only where a feature signs in through them (its broker).
      const brokered = extensions.externalSignIn !== null
      if (instanceId === PLATFORM)
        return {
          policy: { ...PLATFORM_LOGIN_POLICY },
          idps: brokered ? platformIdps(core.config) : [],
          brand: null,
        }
      const [policy, idps, brand] = await Promise.all([
        extensions.loginPolicy(instanceId),
        brokered ? extensions.externalIdps?.(instanceId) : [],
        brandOf(core.config, extensions, instanceId),
      ])
      return { policy, idps: idps ?? [], brand }
    },
  )
  // The pool reads a workspace's state and rate in one: whichever of it and the limiter asks first.
  const limit = createDataPlaneLimit(core, MEMO_MS, (instanceId) =>
    pool.readState(instanceId).then((state) => state.dataPlaneRps),
  )
  pool.onState((instanceId, state, at) => limit.heard(instanceId, state.dataPlaneRps, at))
  const pages = pageContext(core, extensions)
  const bridge = new IdentityBridge(
    core,
    pool,
    addressing,
    {
      pages: mountInstanceApp(core, hostedPages(pages), 'hosted'),
      endpoints: extensions.endpoints.length ? mountInstanceApp(core, extensions.endpoints, 'control') : null,
    },
    limit,
  )
  return {
    fetch: (instanceId, path, init, clientIp) => bridge.fetch(instanceId, path, init, clientIp),
    route: (host, pathname) => bridge.route(host, pathname),
    handle: (request, route, caller, url) => bridge.handle(request, route, caller, url),
    pool,
  }
}
