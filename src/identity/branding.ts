import type { Config } from '../config'
import { type HostedBrand, hostedBrand } from '../shared/views/brand'
import type { Extensions } from './engine/extension'
import { issuerFor } from './instances'

/** Where an instance serves its workspace's logo, below its issuer. */
export const LOGO_PATH = '/branding/logo'

/**
 * The logo's URL at an instance; its version (a digest of the bytes) in the query, so a new logo is
 * a new URL and the old one may be cached for good.
 */
export const brandingLogoUrl = (config: Config, workspaceId: string, version: string) =>
  `${issuerFor(config, workspaceId)}${LOGO_PATH}?v=${encodeURIComponent(version)}`

/** The brand a workspace's instance draws its pages with, or null for the platform's look. */
export async function brandOf(
  config: Config,
  extensions: Pick<Extensions, 'branding'>,
  workspaceId: string,
): Promise<HostedBrand | null> {
  const branding = await extensions.branding?.settings(workspaceId)
  if (!branding) return null
  const { logo, ...settings } = branding
  return hostedBrand(settings, logo ? brandingLogoUrl(config, workspaceId, logo.version) : null)
}

/**
 * The CSP source that lets the dashboard show instances' logos: their origin, or every instance
 * host under a host-based issuer (`https://*.auth.example.com`).
 */
export function logoImageSource(config: Config): string {
  const marker = 'workspaceidmarker'
  const url = new URL(config.authUrlTemplate.replace('{workspace_id}', marker))
  const labels = url.hostname.split('.')
  const at = labels.findIndex((label) => label.includes(marker))
  if (at < 0) return url.origin
  return `${url.protocol}//*.${labels.slice(at + 1).join('.')}${url.port ? `:${url.port}` : ''}`
}
