import type { Feature } from '../feature'
import { smtpPages } from './pages'
import { smtpRoutes } from './routes'
import { deleteWorkspaceSmtp } from './service'

/**
 * A workspace's own mail server (DESIGN "SMTP"): through the API and on Settings → SMTP. The mail
 * feature sends every mail of the workspace through it while it is active.
 */
export const feature: Feature = {
  name: 'smtp',
  routes: ({ core, auth }) => smtpRoutes(core, auth),
  pages: ({ core, auth, sidebar }) => smtpPages(core, auth, sidebar),
  nav: [{ label: 'SMTP', path: 'settings/smtp', place: 'settings', order: 30 }],
  teardown: deleteWorkspaceSmtp,
}
