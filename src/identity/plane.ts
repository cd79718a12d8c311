import type { Core } from '../core'
import { preparePasswordChecks } from './accounts'
import { brandOf } from './branding'
import { type FetchInit, IdentityBridge, type RequestTarget } from './bridge'
import { platformIdps } from './broker/protocol'
import type { IdentityDeps } from './deps'
import { instanceAddressing, PLATFORM } from './instances'
import { ensureInstanceKeys } from './keys'
import { rehashLegacyPayloads } from './legacy-payloads'
import { createPageRouter } from './pages/routes'
import { PLATFORM_LOGIN_POLICY } from './policy'
import { InstancePool } from './pool'
import { buildProvider, servedInstance } from './provider'
import { createDataPlaneLimit } from './rate-limit'

export type { RequestTarget }

export interface IdentityPlane {
  /** Sends a request to an instance in-process: the control plane's own calls (code exchange, device flow). */
  fetch(instanceId: string, path: string, init?: FetchInit, clientIp?: string): Promise<Response>
  /**
   * The front door's share of a request: the answer when it is addressed to an instance, null when
   * it is the control plane's. `clientIp` is called only for the plane's requests.
   */
  handle(request: Request, where: RequestTarget, clientIp: () => string): Promise<Response> | Response | null
  /** The instances served (tests reach the shared Provider through it). */
  pool: InstancePool
}

/** The identity plane of this process: the platform instance ready, the Provider pool, the bridge. */
export async function createIdentityPlane(core: Core, deps: IdentityDeps): Promise<IdentityPlane> {
  await rehashLegacyPayloads(core)
  await ensureInstanceKeys(core, PLATFORM)
  preparePasswordChecks()
  const addressing = instanceAddressing(core.config)
  const pool = new InstancePool(
    core,
    (instanceId, keys, policy) =>
      servedInstance(core, instanceId, addressing.prefixOf(instanceId), keys, policy, deps.clients),
    buildProvider(core, deps),
    deps.workspaceActive,
    async (instanceId) =>
      instanceId === PLATFORM
        ? { policy: { ...PLATFORM_LOGIN_POLICY }, idps: platformIdps(core.config), brand: null }
        : {
            policy: await deps.loginPolicy(instanceId),
            idps: (await deps.externalIdps?.(instanceId)) ?? [],
            brand: await brandOf(core.config, deps, instanceId),
          },
  )
  const bridge = new IdentityBridge(
    core,
    pool,
    addressing,
    createPageRouter({ core, deps }),
    createDataPlaneLimit(core, deps.dataPlaneRps),
  )
  return {
    fetch: (instanceId, path, init, clientIp) => bridge.fetch(instanceId, path, init, clientIp),
    handle: (request, where, clientIp) => bridge.handle(request, where, clientIp),
    pool,
  }
}
