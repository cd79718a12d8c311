// The event types alone, without the outbox: what models and clients (the MCP server) list
// without loading the store.

/** The event types of SPEC "Outgoing webhook events". */
export type EventType =
  | 'user.created'
  | 'user.updated'
  | 'user.deleted'
  | 'session.started'
  | 'session.ended'
  | 'tenant.created'
  | 'tenant.deleted'
  | 'plan.changed'
  | 'subscription.past_due'
  | 'mau.threshold_warning'
  | 'signups_blocked'
  /** Sent by `POST …/webhooks/{id}/test` to that endpoint only; not subscribable. */
  | 'webhook.test'

/** What a subscription may list (SPEC "Outgoing webhook events"). */
export const SUBSCRIBABLE_EVENTS = [
  'user.created',
  'user.updated',
  'user.deleted',
  'session.started',
  'session.ended',
  'tenant.created',
  'tenant.deleted',
  'plan.changed',
  'subscription.past_due',
  'mau.threshold_warning',
  'signups_blocked',
] as const satisfies readonly EventType[]
export type SubscribableEvent = (typeof SUBSCRIBABLE_EVENTS)[number]
