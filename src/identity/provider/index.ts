import '../runtime-warning'
import Provider from 'oidc-provider'
import type { Core } from '../../core'
import { safeEqual, sha256Hex } from '../../shared/crypto'
import { issuerFor } from '../instances'
import { logoutEvents } from '../pages/logout'
import { type InstanceSetup, providerConfiguration } from './configuration'
import { handleProviderErrors } from './error-events'
import { devicePolling } from './grants/device-polling'

/**
 * Builds the Provider of one instance: its configuration, its error handling, then the middleware
 * of the grants that oidc-provider leaves to us (one file each in grants/). Client secrets are
 * compared as SHA-256 digests.
 */
export function buildProvider(core: Core, instanceId: string, setup: InstanceSetup): Provider {
  const provider = new Provider(
    issuerFor(core.config, instanceId),
    providerConfiguration(core, instanceId, setup),
  )
  // The bridge forwards X-Forwarded-Proto/Host derived from the issuer.
  provider.proxy = true
  handleProviderErrors(core, provider, instanceId)
  provider.use(devicePolling(core, instanceId))
  provider.use(logoutEvents(core, instanceId))
  provider.Client.prototype.compareClientSecret = function compareClientSecret(
    this: { clientSecret: string },
    actual: string,
  ) {
    return safeEqual(this.clientSecret, sha256Hex(actual))
  }
  return provider
}
