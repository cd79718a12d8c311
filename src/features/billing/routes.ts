import { Elysia } from 'elysia'
import type { AuthPlugin } from '../../access/guard'
import type { Core } from '../../core'
import { WorkspaceModel } from '../workspaces/model'
import type { Workspace } from '../workspaces/service'
import { createPaymentEvents } from './events'
import { BillingModel } from './model'
import { createBillingService } from './service'

const tags = ['billing']
/** SPEC "Authentication": changing plan takes workspace:admin; so does every billing mutation. */
const admin = 'workspace:admin' as const

/** SPEC "Billing": a workspace's plan, checkout, portal, scheduled downgrade and spending cap. */
export function billingRoutes(core: Core, auth: AuthPlugin<Workspace>) {
  const service = createBillingService(core)
  return new Elysia({ name: 'billing-routes', prefix: '/v1/workspaces/:workspace_id/billing' })
    .use(auth)
    .get('/', ({ workspace }) => service.state(workspace), {
      params: WorkspaceModel.params,
      scope: 'workspace:read',
      response: BillingModel.state,
      detail: { tags, summary: 'The billing state (plan, subscription, cap, scheduled change)' },
    })
    .post('/checkout', ({ workspace, actor, body }) => service.checkout(workspace, actor, body.plan), {
      params: WorkspaceModel.params,
      body: BillingModel.checkout,
      scope: admin,
      response: BillingModel.checkoutOut,
      detail: {
        tags,
        summary: 'Start a hosted checkout for a plan',
        description:
          'Enterprise is 422 (contact sales). A workspace whose subscription is on a lower plan moves up at once, ' +
          'the prorated remainder charged now, and `url` is its billing page.',
      },
    })
    .post('/portal', ({ workspace, actor }) => service.portal(workspace, actor), {
      params: WorkspaceModel.params,
      scope: admin,
      response: BillingModel.portalOut,
      detail: { tags, summary: "Open Stripe's customer portal" },
    })
    .post(
      '/schedule-plan-change',
      ({ workspace, actor, body }) => service.schedule(workspace, actor, body.plan),
      {
        params: WorkspaceModel.params,
        body: BillingModel.schedule,
        scope: admin,
        response: BillingModel.state,
        detail: {
          tags,
          summary: 'Schedule a downgrade at the current period end',
          description: 'Downgrades only (no prorations, credits or refunds); an upgrade is 422.',
        },
      },
    )
    .delete('/schedule-plan-change', ({ workspace, actor }) => service.release(workspace, actor), {
      params: WorkspaceModel.params,
      scope: admin,
      response: BillingModel.state,
      detail: { tags, summary: 'Drop the scheduled change; the subscription renews as it is' },
    })
    .patch('/spending-cap', ({ workspace, actor, body }) => service.setSpendingCap(workspace, actor, body), {
      params: WorkspaceModel.params,
      body: BillingModel.spendingCap,
      scope: admin,
      response: BillingModel.state,
      detail: { tags, summary: 'Set or remove the overage cap (from the next billing period on)' },
    })
}

/**
 * SPEC "Inbound payment-provider webhook": Stripe's events, authenticated by their signature alone
 * (no session, no key) and exempt from rate limits (DESIGN "Rate limits"). The body is read raw,
 * never parsed first: the signature covers its exact bytes.
 */
export function paymentWebhookRoutes(core: Core) {
  const events = createPaymentEvents(core)
  return new Elysia({ name: 'payment-webhook' }).post(
    '/v1/webhooks/payments',
    async ({ request }) => events.receive(await request.text(), request.headers.get('stripe-signature')),
    {
      parse: 'none',
      response: BillingModel.received,
      detail: {
        tags,
        summary: "Stripe's events (signed): the plan, status and grace of a workspace",
        description:
          'Verified on the raw body against `Stripe-Signature`: 400 when it is missing or wrong, when its ' +
          'timestamp is more than 300 s from now either way, and always while billing is not configured ' +
          '(there is no secret to verify it with). Each event id is applied once: a redelivery answers 200 ' +
          'with `duplicate: true` and changes nothing.',
      },
    },
  )
}
