// Deep imports of oidc-provider 9.13 internals used by the shared-Provider spike only
// (scripts/bench/shared-provider-spike.ts). Not part of the product.
declare module 'oidc-provider/lib/helpers/weak_cache.js' {
  /** The Provider's private `#int` record (configuration, keystore, jwks, Adapter, dynamicClients…). */
  const instance: (provider: unknown) => Record<string, unknown> & {
    configuration: Record<string, unknown> & { cookies: { long: Record<string, unknown> } }
  }
  export default instance
}
declare module 'oidc-provider/lib/helpers/keystore.js' {
  export default class KeyStore {
    add(key: Record<string, unknown>): void
    [Symbol.iterator](): IterableIterator<Record<string, unknown>>
  }
}
declare module 'oidc-provider/lib/helpers/lru.js' {
  export default class LRU<K = string, V = unknown> {
    constructor(opts: { maxSize: number })
    get(key: K): V | undefined
    set(key: K, value: V, opts?: { maxAge?: number }): this
    has(key: K): boolean
    delete(key: K): boolean
    clear(): void
    readonly size: number
  }
}
