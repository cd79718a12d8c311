import { Elysia } from 'elysia'
import type { Feature } from '../feature'
import { tenantPages } from './pages'
import { tenantBatchRoutes, tenantMemberRoutes, tenantRoutes } from './routes'
import { deleteWorkspaceTenants, tenantsOf } from './service'
import { joinInvitedTenants, purgeExpiredTenantInvitations } from './service.invitations'

/**
 * Tenants (DESIGN "Tenants"): a workspace's customers and their members (users of its identity
 * instance), the batch API, and the `tenants` claim the identity plane asks for. Tenant scopes are
 * the guard's (`tenantScope`); a deleted user leaves their tenants through the users feature, and
 * an address invited to a tenant joins it at its account's next sign-in.
 */
export const feature: Feature = {
  name: 'tenants',
  routes: ({ core, auth }) =>
    new Elysia({ name: 'tenants' })
      .use(tenantRoutes(core, auth))
      .use(tenantMemberRoutes(core, auth))
      .use(tenantBatchRoutes(core, auth)),
  pages: ({ core, auth, sidebar }) => tenantPages(core, auth, sidebar),
  nav: [{ label: 'Tenants', path: 'tenants', place: 'sidebar', order: 30 }],
  teardown: deleteWorkspaceTenants,
  purges: [purgeExpiredTenantInvitations],
  identity: (core) => {
    const slugsOf = tenantsOf(core)
    return {
      claims: [
        {
          scope: 'tenants',
          claims: ['tenants'],
          read: async (instanceId, accountId) => ({ tenants: await slugsOf(instanceId, accountId) }),
        },
      ],
      signedIn: [joinInvitedTenants(core)],
    }
  },
}
