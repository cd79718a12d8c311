import { defineErrorCodes } from '../../shared/errors'

/** What a workspace's webhooks refuse. */
export const WebhookErrors = defineErrorCodes({
  WEBHOOK_NOT_FOUND: 'Webhook not found',
  DELIVERY_NOT_FOUND: 'Delivery not found',
  URL_REFUSED: 'This URL cannot receive webhooks',
  TOO_MANY_WEBHOOKS: 'A workspace has at most 50 webhook endpoints: delete one first',
  WORKSPACE_DELETING: 'This workspace is being deleted',
})
