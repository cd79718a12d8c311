import type { IncomingMessage, ServerResponse } from 'node:http'
import { LRUCache } from 'lru-cache'
import type Provider from 'oidc-provider'
import type { Core } from '../core'
import { isInstanceId, MEMO_MS, PLATFORM } from './instances'
import { type InstanceKeyMaterial, loadInstanceKeys } from './keys'

export interface Instance {
  id: string
  provider: Provider
  callback: (req: IncomingMessage, res: ServerResponse) => void
}

/**
 * Providers of active instances, built on first use and kept in an LRU (about 150 KiB each).
 * A Provider is created only for `platform` or a workspace that exists and is active, so
 * requests to `/i/<random>` cost one indexed lookup and no memory.
 */
export class InstancePool {
  private readonly cache: LRUCache<string, Instance>
  private readonly servingUntil = new Map<string, number>()

  constructor(
    private readonly core: Core,
    private readonly build: (instanceId: string, keys: InstanceKeyMaterial) => Provider,
    /** Whether the workspace of an instance is active (the workspaces feature's state). */
    private readonly workspaceActive: (instanceId: string) => boolean,
    max = 500,
  ) {
    this.cache = new LRUCache({ max })
  }

  /**
   * Whether the instance may serve now. An `active` answer is remembered for a few seconds (a
   * lookup per request costs more than some endpoints); leaving `active` goes through
   * `core.instances.changed`, which forgets it at once.
   */
  isServing(instanceId: string): boolean {
    if (!isInstanceId(instanceId)) return false
    if (instanceId === PLATFORM) return true
    const now = this.core.clock.now()
    const until = this.servingUntil.get(instanceId)
    if (until !== undefined && until > now) return true
    if (!this.workspaceActive(instanceId)) {
      this.servingUntil.delete(instanceId)
      return false
    }
    this.servingUntil.set(instanceId, now + MEMO_MS)
    return true
  }

  get(instanceId: string): Instance | null {
    if (!this.isServing(instanceId)) {
      this.cache.delete(instanceId)
      return null
    }
    const cached = this.cache.get(instanceId)
    if (cached) return cached
    const keys = loadInstanceKeys(this.core, instanceId)
    if (!keys) return null
    const provider = this.build(instanceId, keys)
    const instance = { id: instanceId, provider, callback: provider.callback() }
    this.cache.set(instanceId, instance)
    return instance
  }

  /** Forgets the instance's Provider (with the clients it memoized) and its remembered state. */
  evict(instanceId: string): void {
    this.cache.delete(instanceId)
    this.servingUntil.delete(instanceId)
  }

  get size(): number {
    return this.cache.size
  }
}
