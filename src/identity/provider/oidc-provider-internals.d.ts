// The two internal modules of oidc-provider 9.13 the shared Provider reaches (shared.ts). The package
// has no `exports` map, so these resolve to the very modules its provider.js imports. The version
// is pinned exactly in package.json; `shareProvider` checks at start-up that the fields it
// redirects still hold what this file says, and refuses to start otherwise.
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
