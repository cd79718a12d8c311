// The types of the two internal modules of oidc-provider the shared Provider reaches. Imported by
// internals.ts only, where each internal touched is listed with why and what breaks if it changes.
// The package has no `exports` map, so these resolve to the very modules its provider.js imports.
declare module 'oidc-provider/lib/helpers/weak_cache.js' {
  /** The Provider's private `#int` record (configuration, keystore, jwks, dynamicClients…). */
  const instance: (provider: unknown) => Record<string, unknown> & {
    configuration: Record<string, unknown> & { cookies: { long: Record<string, unknown> } }
  }
  export default instance
}
declare module 'oidc-provider/lib/helpers/keystore.js' {
  /** The private keys an issuer signs with (what `#int.keystore` holds). */
  export default class KeyStore {
    add(key: object): void
    [Symbol.iterator](): IterableIterator<Record<string, unknown>>
  }
}
