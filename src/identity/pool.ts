import type { IncomingMessage, ServerResponse } from 'node:http'
import { LRUCache } from 'lru-cache'
import type Provider from 'oidc-provider'
import type { Core } from '../core'
import { isInstanceId, MEMO_MS, PLATFORM } from './instances'
import { loadInstanceKeys } from './keys'
import { buildProvider } from './provider'

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
  private readonly stateOf

  constructor(
    private readonly core: Core,
    private readonly prefixFor: (instanceId: string) => string,
    max = 500,
  ) {
    this.cache = new LRUCache({ max })
    this.stateOf = core.db.$client.prepare('SELECT state FROM workspaces WHERE id = $id')
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
    const row = this.stateOf.get({ id: instanceId }) as { state: string } | null
    if (row?.state !== 'active') {
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
    const provider = buildProvider(this.core, instanceId, keys, this.prefixFor(instanceId))
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
