import type { Feature } from '../feature'
import { brandingPages } from './pages'
import { brandingRoutes } from './routes'
import { brandingLogoOf, deleteWorkspaceBranding, instanceBrandingOf } from './service'

/**
 * Branding (DESIGN "Branding"): a workspace's display name, logo, colours and legal links, through
 * the API and on Settings → Branding, and on every hosted page of its instance (the identity plane
 * asks for them, and serves the logo).
 */
export const feature: Feature = {
  name: 'branding',
  routes: ({ core, auth }) => brandingRoutes(core, auth),
  pages: ({ core, auth, sidebar }) => brandingPages(core, auth, sidebar),
  // A logo may be 1 MiB: its upload is let through up to 4 MiB, so a file too large is told why (422).
  bodyLimits: [
    { path: /^\/(v1|app)\/workspaces\/[^/]+\/(settings\/)?branding\/logo$/, bytes: 4 * 1024 * 1024 },
  ],
  nav: [{ label: 'Branding', path: 'settings/branding', place: 'settings', order: 40 }],
  teardown: deleteWorkspaceBranding,
  identity: (core) => ({ branding: { settings: instanceBrandingOf(core), logo: brandingLogoOf(core) } }),
}
