import { Elysia } from 'elysia'
import type { Feature } from '../feature'
import { webhookJobs } from './jobs'
import { webhookPages } from './pages'
import { webhookRoutes } from './routes'
import { purgeWebhookRows } from './service'

/**
 * Outgoing webhooks (DESIGN "Webhooks", SPEC "Events"): endpoints and their signing secrets, and the
 * deliveries `emit()` fans out to them (events/), posted by the `webhook.deliver` job with retries,
 * a per-endpoint cap and the outbound guard. Their rows go with the workspace's events
 * (`deleteWorkspaceEvents`).
 */
export const feature: Feature = {
  name: 'webhooks',
  routes: ({ core, auth }) => new Elysia({ name: 'webhooks' }).use(webhookRoutes(core, auth)),
  pages: ({ core, auth, sidebar }) => webhookPages(core, auth, sidebar),
  nav: [{ label: 'Webhooks', path: 'settings/webhooks', place: 'sidebar', order: 60 }],
  jobs: () => webhookJobs(),
  purges: [purgeWebhookRows],
}
