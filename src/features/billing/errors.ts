import { defineErrorCodes } from '../../shared/errors'

/** What billing refuses (DESIGN "Billing", SPEC "Billing" rules 1–4 and "Errors"). */
export const BillingErrors = defineErrorCodes({
  NOT_CONFIGURED: 'Billing is not configured: every workspace is on the Free plan',
  CONTACT_SALES: 'The Enterprise plan is sold by our sales team, not through checkout: contact sales',
  FREE_NEEDS_NO_CHECKOUT: 'The Free plan needs no checkout: schedule a downgrade to it instead',
  ALREADY_ON_PLAN:
    'This workspace is already on this plan or a higher one: downgrades are scheduled, not bought',
  UPGRADE_NOT_SCHEDULED:
    'Only downgrades are scheduled: an upgrade goes through checkout (POST …/billing/checkout), which charges the prorated remainder at once',
  SAME_PLAN: 'This workspace is already on this plan',
  NO_SUBSCRIPTION: 'This workspace has no active subscription: start one through checkout first',
  NO_CUSTOMER: 'This workspace has no billing account yet: start a subscription through checkout first',
  PROVIDER_FAILED: 'The payment provider did not complete the request: try again in a moment',
  BAD_SIGNATURE: 'Missing or invalid Stripe-Signature',
  WORKSPACE_DELETING: 'This workspace is being deleted',
})
