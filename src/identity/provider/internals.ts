import type Provider from 'oidc-provider'
import KeyStoreClass from 'oidc-provider/lib/helpers/keystore.js'
import weakCache from 'oidc-provider/lib/helpers/weak_cache.js'

/**
 * EVERY reach of Gatehouse into oidc-provider's internals, and only here (the deep imports' types:
 * oidc-provider-internals.d.ts). One Provider serves every instance (index.ts) because the state
 * oidc-provider keeps per issuer is pointed at the request's instance; that state is private, so
 * tenant isolation rests on the exact version below. On an upgrade, for each entry of INTERNALS:
 * read the new oidc-provider where "read" says, check it still reads the field PER CALL (a field
 * read once at construction passes every shape check here and serves the template's value to every
 * instance), then set VERIFIED_OIDC_PROVIDER. internals.test.ts fails until then, and checks each
 * entry's shape; tests/instance-isolation.test.ts and served.test.ts check the behaviour.
 * Not reached, and why that is safe, in notes/shared-provider-spike.md (models, router, grant
 * handlers hold nothing of an issuer; DPoP nonces and client metadata documents stay off).
 */
export const VERIFIED_OIDC_PROVIDER = '9.13.3'

export type KeyStore = KeyStoreClass

/** What the redirected state reads of the request's instance (ServedInstance has it all). */
export interface PerIssuer {
  issuer: string
  /** Path prefix of the issuer ('' when served at the root of its host). */
  prefix: string
  keystore: KeyStore
  jwks: { keys: Record<string, unknown>[] }
  cookieKeys: () => string[]
  /** Client objects by the digest of their metadata (Client.find's dynamic path). */
  clientObjects: { get(digest: string): unknown; set(digest: string, client: unknown): void }
  /** Client objects (or their metadata, until made) by client id (Client.find's static path). */
  findClient: { remembered: { get(clientId: string): unknown; set(clientId: string, client: unknown): void } }
}

/** oidc-provider's private `#int` record of a Provider, through its own reader. */
const int = (provider: Provider) => weakCache(provider)

/** A getter in place of a field: every read answers the request's instance; writes are dropped. */
const redirect = (target: object, field: string, get: () => unknown) =>
  Object.defineProperty(target, field, { get, set: () => {}, configurable: false, enumerable: true })

/** One internal touched: what it is, why, what an upgrade that changes it breaks. */
export interface Internal {
  name: string
  /** Where oidc-provider 9.13.3 reads it (what to re-read on an upgrade). */
  read: string
  why: string
  breaks: string
  /** Whether a Provider just constructed holds it as relied on (the start-up and the test check it). */
  holds(provider: Provider): boolean
}

/** An internal pointed at the request's instance by `shareProvider`. */
interface Redirect extends Internal {
  redirect(provider: Provider, served: () => PerIssuer): void
}

const ownString = (o: object, field: string) => {
  const d = Object.getOwnPropertyDescriptor(o, field)
  return d?.configurable === true && typeof d.value === 'string'
}

const REDIRECTS: readonly Redirect[] = [
  {
    name: 'provider.issuer',
    read: 'ctx.oidc.issuer and provider.issuer: discovery, `iss` of tokens (formats/jwt.js, id_token.js), introspection, authorization responses, client assertion audiences',
    why: 'each instance has its own issuer',
    breaks: 'read once into a closure: every instance names the placeholder issuer',
    holds: (provider) => ownString(provider, 'issuer'),
    redirect: (provider, served) => redirect(provider, 'issuer', () => served().issuer),
  },
  {
    name: 'provider.keys (Koa app.keys)',
    read: 'Koa ctx.cookies (Keygrip per context): every signed cookie',
    why: "each instance signs its cookies with its own keys: A's cookie is not valid at B",
    breaks: 'a Keygrip made once: every instance signs with the template keys',
    holds: (provider) => Array.isArray((provider as unknown as { keys: unknown }).keys),
    redirect: (provider, served) => redirect(provider, 'keys', () => served().cookieKeys()),
  },
  {
    name: '#int.keystore',
    read: 'formats/jwt.js, models/id_token.js, process_request_object.js, per token',
    why: 'each instance signs with its own private keys (signing-keys.ts)',
    breaks: "renamed: start-up fails; cached elsewhere: tokens signed with the template's keys",
    holds: (provider) => int(provider).keystore instanceof KeyStoreClass,
    redirect: (provider, served) => redirect(int(provider), 'keystore', () => served().keystore),
  },
  {
    name: '#int.jwks',
    read: 'actions/jwks.js, per request',
    why: 'each instance publishes its own public keys',
    breaks: "the jwks endpoint publishes the template's keys",
    holds: (provider) => Array.isArray((int(provider).jwks as { keys?: unknown } | undefined)?.keys),
    redirect: (provider, served) => redirect(int(provider), 'jwks', () => served().jwks),
  },
  {
    name: '#int.dynamicClients',
    read: 'models/client.js Client.find, after adapter.find(id), keyed by the digest of the metadata',
    why: "Client objects per instance, bounded per instance and dropped with it (oidc-provider's LRU holds 100 for all)",
    breaks: 'one cache for all instances: a Client rebuilt on most requests, memory kept after an eviction',
    holds: (provider) => {
      const cache = int(provider).dynamicClients as { get?: unknown; set?: unknown } | undefined
      return typeof cache?.get === 'function' && typeof cache.set === 'function'
    },
    redirect: (provider, served) => redirect(int(provider), 'dynamicClients', () => served().clientObjects),
  },
  {
    name: '#int.staticClients',
    read: 'models/client.js Client.find, first, by client id (initialize_clients.js fills it from `clients`)',
    why: "the instance's remembered clients found by id, without the adapter's await and the metadata's digest (clients.ts)",
    breaks:
      "a static client of the construction would be every instance's; renamed: every token takes the dynamic path",
    holds: (provider) => int(provider).staticClients === undefined,
    redirect: (provider, served) =>
      redirect(int(provider), 'staticClients', () => served().findClient.remembered),
  },
  {
    name: '#int.configuration.cookies.long.path',
    read: 'shared/session.js and models/session.js pass cookies.long to ctx.cookies.set/get, per call',
    why: "path-based instances share a host: the session cookies are scoped to the instance's path",
    breaks: "copied at construction: one instance's session cookie is sent to every instance of the host",
    holds: (provider) => {
      const { cookies } = int(provider).configuration
      return typeof cookies?.long?.path === 'string'
    },
    redirect: (provider, served) =>
      redirect(int(provider).configuration.cookies.long, 'path', () => served().prefix || '/'),
  },
  {
    name: 'provider.pathFor (its #mountPath default)',
    read: "provider.urlFor outside a request's context (inside one, ctx.oidc.urlFor passes its own mountPath)",
    why: "the private #mountPath is the placeholder issuer's path; the served instance's prefix replaces it",
    breaks: "renamed option: provider.urlFor answers the placeholder's path",
    holds: (provider) => provider.pathFor('token', { mountPath: '/m' } as never) === '/m/token',
    redirect: (provider, served) => {
      const pathFor = provider.pathFor
      provider.pathFor = function scopedPathFor(this: Provider, name: string, opts: object = {}) {
        return pathFor.call(this, name, { mountPath: served().prefix, ...opts } as never)
      } as typeof provider.pathFor
    },
  },
]

/** The Client method `patchClientSecretCompare` replaces. */
const CLIENT_SECRET_COMPARE: Internal = {
  name: 'Client.prototype.compareClientSecret',
  read: 'shared/client_auth.js, `await ctx.oidc.client.compareClientSecret(secret)` for client_secret_basic/post',
  why: "client secrets are stored as SHA-256 digests (and a rotated one's previous digest in its grace), never in the clear",
  breaks:
    'renamed or bypassed: every confidential client is refused (the digest compared to the secret as text)',
  holds: (provider) => {
    const compare = (provider.Client.prototype as { compareClientSecret?: unknown }).compareClientSecret
    return typeof compare === 'function' && compare.length === 1
  },
}

/** The modules reached by path: the package has no `exports` map, so they are the very ones provider.js imports. */
const MODULES: readonly Internal[] = [
  {
    name: 'lib/helpers/weak_cache.js',
    read: 'provider.js registers its `#int` reader there (instance.setReader); every module reads `#int` through it',
    why: 'the only way to reach the private `#int` record',
    breaks: 'moved or no longer the reader: start-up fails (every `#int` entry above)',
    holds: (provider) => typeof weakCache === 'function' && typeof int(provider)?.configuration === 'object',
  },
  {
    name: 'lib/helpers/keystore.js',
    read: 'initialize_keystore.js builds #int.keystore of it; id_token.js and formats/jwt.js call selectForSign and getKeyObject',
    why: "each instance's keystore is built as initialize_keystore.js builds the construction's (instance-scope.ts)",
    breaks: "another class or methods: an instance's keys are not found to sign with",
    holds: () => {
      const proto = KeyStoreClass.prototype as unknown as Record<string, unknown>
      return ['add', 'selectForSign', 'getKeyObject', Symbol.iterator].every(
        (m) => typeof proto[m as string] === 'function',
      )
    },
  },
]

/** Every internal touched, for the checks (start-up and internals.test.ts). */
export const INTERNALS: readonly Internal[] = [...MODULES, ...REDIRECTS, CLIENT_SECRET_COMPARE]

function check(provider: Provider, internals: readonly Internal[]): void {
  for (const internal of internals)
    if (!internal.holds(provider))
      throw new Error(
        `oidc-provider changed: ${internal.name} is not what the shared Provider relies on (internals.ts)`,
      )
}

/**
 * Points every per-issuer state of the Provider at the request's instance (`served`), each first
 * checked to hold what the construction put there, so an upgrade that renamed one stops the process
 * here instead of serving the template's keys or issuer. Nothing of the library is patched but the
 * one method `patchClientSecretCompare` replaces.
 */
export function shareProvider(provider: Provider, served: () => PerIssuer): void {
  check(provider, [...MODULES, ...REDIRECTS])
  for (const r of REDIRECTS) r.redirect(provider, served)
}

/** Client secrets compared by `compare` (the Client object and the secret presented). */
export function patchClientSecretCompare<C extends object>(
  provider: Provider,
  compare: (client: C, actual: string) => boolean,
): void {
  check(provider, [CLIENT_SECRET_COMPARE])
  ;(provider.Client.prototype as { compareClientSecret: unknown }).compareClientSecret = function (
    this: C,
    actual: string,
  ) {
    return compare(this, actual)
  }
}

/** A keystore as oidc-provider keeps one, of an instance's keys (instance-scope.ts). */
export function keyStoreOf(keys: Iterable<object>): KeyStore {
  const keystore = new KeyStoreClass()
  for (const key of keys) keystore.add(key)
  return keystore
}
