import { Elysia } from 'elysia'
import type { Feature } from '../feature'
import { deleteBillingAccount } from './account'
import { purgeBillingEvents } from './events'
import { billingJobs } from './jobs'
import { billingPages } from './pages'
import { billingRoutes, paymentWebhookRoutes } from './routes'
import { createUsageMeter, deleteWorkspaceUsage } from './usage'

/**
 * Billing with Stripe (DESIGN "Billing", issue 31): plans, checkout, the portal, scheduled
 * downgrades, the spending cap, the signed inbound webhook that keeps the plan, and MAU metering,
 * which the identity plane runs on each sign-in (a `signedIn` hook) and asks before a new user
 * signs up (a sign-up check). Without STRIPE_SECRET_KEY every workspace is Free and nothing is
 * metered.
 */
export const feature: Feature = {
  name: 'billing',
  routes: ({ core, auth }) =>
    new Elysia({ name: 'billing' }).use(billingRoutes(core, auth)).use(paymentWebhookRoutes(core)),
  pages: ({ core, auth, sidebar }) => billingPages(core, auth, sidebar),
  nav: [{ label: 'Billing', path: 'billing', place: 'sidebar', order: 90 }],
  teardown: async (core, workspaceId) => {
    await deleteWorkspaceUsage(core, workspaceId)
    await deleteBillingAccount(core, workspaceId)
  },
  purges: [purgeBillingEvents],
  jobs: () => billingJobs(),
  identity: (core) => {
    if (!core.config.billing.stripe) return {}
    const meter = createUsageMeter(core, core.config.billing)
    return {
      signedIn: [(workspaceId, account) => meter.activeUser(workspaceId, account.id)],
      signUpChecks: [{ name: 'monthly-active-users', blocks: meter.signupsBlocked }],
    }
  },
}
