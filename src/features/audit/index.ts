import type { Feature } from '../feature'
import { auditLogPages } from './pages'
import { auditLogRoutes } from './routes'

/**
 * Reading a workspace's audit log: its API (with the CSV export) and its settings page. The table
 * and `core.audit`, which every feature writes through, are src/audit's; the workspaces feature's
 * teardown removes the entries with the workspace.
 */
export const feature: Feature = {
  name: 'audit',
  routes: ({ core, auth }) => auditLogRoutes(core, auth),
  pages: ({ core, auth, sidebar }) => auditLogPages(core, auth, sidebar),
  nav: [{ label: 'Audit log', path: 'settings/audit-log', place: 'sidebar', order: 70 }],
}
