import '../runtime-warning'
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import Provider from 'oidc-provider'
import type { Core } from '../../core'
import { hexBytes, sha256Matches } from '../../shared/crypto'
import { PREVIOUS_SECRET, type PreviousSecret } from '../clients'
import type { Extensions } from '../engine/extension'
import { registerGrants } from '../engine/grants'
import { logoutEvents } from '../pages/logout'
import { providerConfiguration } from './configuration'
import { handleProviderErrors } from './error-events'
import { devicePolling } from './grants/device-polling'
import { current, SIGNING_ALGS } from './instance-scope'
import { patchClientSecretCompare, shareProvider } from './internals'

export { current, type ServedInstance, type ServedKeys, servedInstance, serving } from './instance-scope'

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
 * The features' claims, steps, grant types and resource servers are part of that one configuration. Client secrets
 * are compared as SHA-256 digests; a rotated one's previous digest is accepted
 * beside the new until its grace ends.
 */
export function buildProvider(
  core: Core,
  extensions: Pick<Extensions, 'claims' | 'steps' | 'grants'> & Partial<Pick<Extensions, 'resourceServers'>>,
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
  patchClientSecretCompare(provider, (client: SecretHolder, actual) => {
    // Decoded once per Client object: a changed secret is new metadata, hence a new Client.
    client[SECRET_DIGEST] ??= hexBytes(client.clientSecret)
    if (sha256Matches(actual, client[SECRET_DIGEST])) return true
    // A rotation's previous secret, only within the grace it asked for (the server's clock).
    const previous = client[PREVIOUS_SECRET]
    if (!previous || core.clock.now() >= previous.until) return false
    client[PREVIOUS_DIGEST] ??= hexBytes(previous.hash)
    return sha256Matches(actual, client[PREVIOUS_DIGEST])
  })
  // Every per-issuer state of oidc-provider reads the request's instance (internals.ts).
  shareProvider(provider, current)
  return provider
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
