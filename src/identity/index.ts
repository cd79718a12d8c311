import type { Core } from '../core'
import { IdentityBridge } from './bridge'
import { createInstanceResolver, issuerFor } from './instances'
import { rehashLegacyPayloads } from './legacy-payloads'
import { ensurePlatformInstance } from './platform'
import { InstancePool } from './pool'

export interface IdentityPlane {
  pool: InstancePool
  bridge: IdentityBridge
}

/** Starts the identity plane: the platform instance, the provider pool and the bridge. */
export async function startIdentityPlane(core: Core): Promise<IdentityPlane> {
  rehashLegacyPayloads(core)
  await ensurePlatformInstance(core)
  const resolve = createInstanceResolver(core.config)
  const prefixFor = (instanceId: string) => {
    const issuer = new URL(issuerFor(core.config, instanceId))
    return resolve(issuer.host, issuer.pathname)?.prefix ?? ''
  }
  const pool = new InstancePool(core, prefixFor)
  const bridge = new IdentityBridge(core, pool)
  return { pool, bridge }
}
