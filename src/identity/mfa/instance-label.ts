import type { Core } from '../../core'
import type { Extensions } from '../engine/extension'
import { issuerFor, PLATFORM } from '../instances'

/**
 * The name an authenticator app lists for the instance, and a passkey's relying party name: the
 * workspace's name when the features hand it in, else the issuer's host and path.
 */
export async function instanceLabel(
  core: Core,
  extensions: Pick<Extensions, 'instanceName'>,
  instanceId: string,
): Promise<string> {
  if (instanceId === PLATFORM) return 'Gatehouse'
  const name = await extensions.instanceName?.(instanceId)
  if (name) return name
  const issuer = new URL(issuerFor(core.config, instanceId))
  return `${issuer.host}${issuer.pathname.replace(/\/$/, '')}`
}
