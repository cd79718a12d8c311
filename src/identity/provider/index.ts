import '../runtime-warning'
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import Provider from 'oidc-provider'
import KeyStore from 'oidc-provider/lib/helpers/keystore.js'
import internals from 'oidc-provider/lib/helpers/weak_cache.js'
import type { Core } from '../../core'
import { hexBytes, sha256Matches } from '../../shared/crypto'
import { PREVIOUS_SECRET, type PreviousSecret } from '../clients'
import type { Extensions } from '../engine/extension'
import { registerGrants } from '../engine/grants'
import { logoutEvents } from '../pages/logout'
import { providerConfiguration } from './configuration'
import { handleProviderErrors } from './error-events'
import { devicePolling } from './grants/device-polling'
import { current, SIGNING_ALGS } from './served'

export { current, type ServedInstance, type ServedKeys, servedInstance, serving } from './served'

/** Where a Client object keeps the bytes of its stored secret digest (compareClientSecret). */
const SECRET_DIGEST = Symbol('client secret digest')
/** Where it keeps those of the previous secret's, in its grace after a rotation. */
const PREVIOUS_DIGEST = Symbol('previous client secret digest')

type SecretHolder = {
  clientSecret: string
  [PREVIOUS_SECRET]?: PreviousSecret
  [SECRET_DIGEST]?: Uint8Array
  [PREVIOUS_DIGEST]?: Uint8Array
}

/** The issuer the Provider is constructed with; never served (every request has its instance). */
const PLACEHOLDER_ID = '00000000-0000-4000-8000-000000000000'

/**
 * Builds THE Provider of this process: one oidc-provider instance serving every identity instance,
 * the platform's included. Its Koa app, routes, models and configuration are the same for all;
 * what differs per instance is read from the request's instance (`current()`, served.ts): the
 * issuer, the signing keys and JWKS, the cookie keys and the long cookies' path, the adapter
 * (clients and payloads), the account finder, prompts, resources and session lifetime. One
 * Provider per instance held ~76 KiB each and could not hold 10,000 (docs/performance.md).
 * The features' claims, steps and grant types are part of that one configuration. Client secrets
 * are compared as SHA-256 digests; a rotated one's previous digest is accepted
 * beside the new until its grace ends.
 */
export function buildProvider(
  core: Core,
  extensions: Pick<Extensions, 'claims' | 'steps' | 'grants'>,
): Provider {
  const provider = new Provider(
    core.config.authUrlTemplate.replace('{workspace_id}', PLACEHOLDER_ID),
    providerConfiguration(core, {
      jwks: templateKeys(),
      cookieKeys: [randomBytes(32).toString('base64url')],
      extensions,
    }),
  )
  // The bridge forwards X-Forwarded-Proto/Host derived from the issuer.
  provider.proxy = true
  handleProviderErrors(core, provider, [devicePolling(core), logoutEvents(core)])
  registerGrants(provider, extensions.grants)
  provider.Client.prototype.compareClientSecret = function compareClientSecret(
    this: SecretHolder,
    actual: string,
  ) {
    // Decoded once per Client object: a changed secret is new metadata, hence a new Client.
    this[SECRET_DIGEST] ??= hexBytes(this.clientSecret)
    if (sha256Matches(actual, this[SECRET_DIGEST])) return true
    // A rotation's previous secret, only within the grace it asked for (the server's clock).
    const previous = this[PREVIOUS_SECRET]
    if (!previous || core.clock.now() >= previous.until) return false
    this[PREVIOUS_DIGEST] ??= hexBytes(previous.hash)
    return sha256Matches(actual, this[PREVIOUS_DIGEST])
  }
  shareProvider(provider)
  return provider
}

/**
 * Points every per-issuer state of oidc-provider 9.13 at the request's instance. None is patched in
 * the library: own properties become getters, and `#int` fields (through its weak_cache reader)
 * too. Each field is first checked to hold what the construction put there, so an upgrade that
 * renames one stops the process here instead of serving the template's keys or issuer. An upgrade
 * that read one of them once at construction instead would pass these checks: oidc-provider is
 * pinned exactly, and served.test.ts (tokens of two instances signed and issued each by its own)
 * and tests/instance-isolation.test.ts are what an upgrade must pass.
 * notes/shared-provider-spike.md lists each state, where oidc-provider reads it, and why the rest
 * (models, router, grant handlers) holds nothing of an issuer.
 */
function shareProvider(provider: Provider): void {
  const int = internals(provider)
  const cookies = int.configuration.cookies.long
  const expect = (ok: boolean, what: string) => {
    if (!ok) throw new Error(`oidc-provider changed: ${what} is not where the shared Provider reads it`)
  }
  const redirect = (target: object, field: string, get: () => unknown) =>
    Object.defineProperty(target, field, { get, set: () => {}, configurable: false, enumerable: true })

  expect(typeof provider.issuer === 'string' && provider.issuer.includes(PLACEHOLDER_ID), 'issuer')
  // The discovery `issuer`, token and ID token `iss`, introspection, WWW-Authenticate, `iss` of
  // authorization responses, client assertion audiences (ctx.oidc.issuer reads it).
  redirect(provider, 'issuer', () => current().issuer)
  // Koa's app.keys: every signed cookie.
  expect(Array.isArray((provider as unknown as { keys: unknown }).keys), 'keys')
  redirect(provider, 'keys', () => current().cookieKeys())
  // Signing (JWT access tokens, ID tokens, JWT responses) and the jwks endpoint's document.
  expect(int.keystore instanceof KeyStore, '#int.keystore')
  redirect(int, 'keystore', () => current().keystore)
  expect(Array.isArray((int.jwks as { keys?: unknown })?.keys), '#int.jwks')
  redirect(int, 'jwks', () => current().jwks)
  // Client objects, cached by the digest of their metadata: per instance, dropped with it.
  const dynamic = int.dynamicClients as { get?: unknown; set?: unknown } | undefined
  expect(typeof dynamic?.get === 'function' && typeof dynamic.set === 'function', '#int.dynamicClients')
  redirect(int, 'dynamicClients', () => current().clientObjects)
  // The static-client slot: the clients the instance remembers, found by id (clients.ts), where a
  // static client of the construction would belong to every instance.
  expect(int.staticClients === undefined, '#int.staticClients')
  redirect(int, 'staticClients', () => current().findClient.remembered)
  // Path-based instances share a host: the long-lived cookies are scoped to the instance's path.
  expect(typeof cookies.path === 'string', 'configuration.cookies.long.path')
  redirect(cookies, 'path', () => current().prefix || '/')
  // provider.urlFor outside a request's context; inside one oidc-provider passes its own mountPath.
  const pathFor = provider.pathFor
  provider.pathFor = function scopedPathFor(this: Provider, name: string, opts: object = {}) {
    return pathFor.call(this, name, { mountPath: current().prefix, ...opts } as never)
  } as typeof provider.pathFor
}

let template: { keys: Record<string, unknown>[] } | undefined

/**
 * Keys of the algorithms every instance signs with, for the construction only: oidc-provider
 * narrows its algorithm lists by them. Never used to sign: the keystore is each instance's.
 */
function templateKeys(): { keys: Record<string, unknown>[] } {
  template ??= {
    keys: SIGNING_ALGS.map((alg) => {
      const { privateKey } =
        alg === 'RS256'
          ? generateKeyPairSync('rsa', { modulusLength: 2048 })
          : generateKeyPairSync('ec', { namedCurve: 'P-256' })
      return { ...privateKey.export({ format: 'jwk' }), alg, use: 'sig', kid: `template-${alg}` }
    }),
  }
  return structuredClone(template)
}
