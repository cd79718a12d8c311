import { Elysia } from 'elysia'
import { deleteWorkspaceAudit } from '../../audit/record'
import { deleteWorkspaceEvents } from '../../events/emit'
import { deleteInstanceData, ensureInstanceKeys } from '../../identity'
import { deleteWorkspaceJobs } from '../../queue/job-queue'
import type { Feature } from '../feature'
import { workspaceName } from './instance-state'
import { workspaceProvision, workspaceTeardown } from './jobs'
import { workspacePages } from './pages'
import { invitationPages, memberPages } from './pages.members'
import { workspaceRoutes } from './routes'
import { memberRoutes } from './routes.members'
import { workspaceAccess } from './scopes'

/**
 * Workspaces, their members (and invitations), and the identity instance each one owns: the
 * instance's signing keys are its first provisioning step, and its rows, events, audit log and jobs
 * go with it (the last teardown step, since the features after it in the list are torn down first).
 * Members and invitations are routes and pages of their own (`*.members.*`), composed here.
 */
export const feature: Feature = {
  name: 'workspaces',
  routes: ({ core, auth }) =>
    new Elysia({ name: 'workspaces' }).use(workspaceRoutes(core, auth)).use(memberRoutes(core, auth)),
  pages: ({ core, auth, nav, sidebar }) =>
    new Elysia({ name: 'workspaces-pages' })
      .use(workspacePages(core, auth, nav, sidebar))
      .use(memberPages(core, auth, sidebar))
      .use(invitationPages(core, auth)),
  nav: [
    { label: 'Overview', path: '', place: 'sidebar', order: 0 },
    { label: 'Members', path: 'settings/members', place: 'sidebar', order: 40 },
    { label: 'Settings', path: 'settings', place: 'sidebar', order: 80 },
  ],
  provision: [
    {
      name: 'signing-keys',
      does: 'create the signing keys',
      run: (core, w) => ensureInstanceKeys(core, w.id),
    },
  ],
  teardown: async (core, workspaceId) => {
    await deleteWorkspaceJobs(core, workspaceId)
    await deleteWorkspaceEvents(core, workspaceId)
    await deleteWorkspaceAudit(core, workspaceId)
    await deleteInstanceData(core, workspaceId)
  },
  jobs: (lifecycle) => [workspaceProvision(lifecycle.provision), workspaceTeardown(lifecycle.teardown)],
  identity: (core) => ({
    instanceName: workspaceName(core),
  }),
  workspaceAccess,
}
