import { boolean, epochMs, index, integer, json, primaryKey, table, text } from '../db/columns'

/** The events outbox: every domain event, written by `emit()` in the caller's transaction. */
export const events = table(
  'events',
  {
    id: text('id').primaryKey(),
    type: text('type').notNull(),
    workspaceId: text('workspace_id').notNull(),
    tenantId: text('tenant_id'),
    data: json<Record<string, unknown>>('data').notNull(),
    createdAt: epochMs('created_at').notNull(),
  },
  (t) => [index('events_workspace_idx').on(t.workspaceId, t.createdAt)],
)

/**
 * Webhook subscriptions (DESIGN "Webhooks"): where a workspace's events are posted. The signing
 * secret is sealed (it must sign, so it cannot be hashed); after a rotation the previous one keeps
 * signing until `previous_secret_until`. `failing_since` is the first failure since the last
 * success: 24 h of it pauses the endpoint (`paused_at`) until it is reactivated.
 */
export const webhooks = table(
  'webhooks',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    url: text('url').notNull(),
    events: json<string[]>('events').notNull(),
    description: text('description'),
    enabled: boolean('enabled').notNull(),
    secretSealed: text('secret_sealed').notNull(),
    previousSecretSealed: text('previous_secret_sealed'),
    previousSecretUntil: epochMs('previous_secret_until'),
    lastSuccessAt: epochMs('last_success_at'),
    failingSince: epochMs('failing_since'),
    pausedAt: epochMs('paused_at'),
    /** The last failure-rate warning mailed to the owners (at most one a day). */
    warnedAt: epochMs('warned_at'),
    createdAt: epochMs('created_at').notNull(),
    updatedAt: epochMs('updated_at').notNull(),
  },
  (t) => [index('webhooks_workspace_idx').on(t.workspaceId, t.createdAt)],
)

export type DeliveryStatus = 'queued' | 'retrying' | 'delivered' | 'failed_permanent'

/** One event for one subscription: its state across attempts (SPEC "Webhook delivery"). */
export const webhookDeliveries = table(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    webhookId: text('webhook_id').notNull(),
    workspaceId: text('workspace_id').notNull(),
    eventId: text('event_id').notNull(),
    eventType: text('event_type').notNull(),
    status: text('status').$type<DeliveryStatus>().notNull(),
    attempts: integer('attempts').notNull().default(0),
    /** Where the retry schedule counts from. */
    firstFailedAt: epochMs('first_failed_at'),
    lastAttemptAt: epochMs('last_attempt_at'),
    /** When it is due; while an attempt is in flight, when that attempt is presumed dead. */
    nextAttemptAt: epochMs('next_attempt_at'),
    /** The job whose attempt is in flight: that job, run again after its node died, may resend at once. */
    claimedBy: text('claimed_by'),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    /** The start of the receiver's last answer (at most 1 KiB of text), for the delivery log. */
    lastResponse: text('last_response'),
    deliveredAt: epochMs('delivered_at'),
    createdAt: epochMs('created_at').notNull(),
    updatedAt: epochMs('updated_at').notNull(),
  },
  (t) => [
    index('webhook_deliveries_webhook_idx').on(t.webhookId, t.createdAt),
    index('webhook_deliveries_status_idx').on(t.webhookId, t.status),
    index('webhook_deliveries_workspace_idx').on(t.workspaceId),
  ],
)

/**
 * Every POST to an endpoint, reserved before it is sent: those not finished count against its
 * concurrency, and the last 30 minutes give its failure rate (the dashboard's, the last 24 h).
 */
export const webhookAttempts = table(
  'webhook_attempts',
  {
    id: text('id').primaryKey(),
    webhookId: text('webhook_id').notNull(),
    workspaceId: text('workspace_id').notNull(),
    deliveryId: text('delivery_id').notNull(),
    startedAt: epochMs('started_at').notNull(),
    finishedAt: epochMs('finished_at'),
    ok: boolean('ok'),
  },
  (t) => [
    index('webhook_attempts_webhook_idx').on(t.webhookId, t.startedAt),
    // The in-flight count walks the unfinished attempts only, whatever the endpoint's volume.
    index('webhook_attempts_in_flight_idx').on(t.webhookId, t.finishedAt, t.startedAt),
    index('webhook_attempts_workspace_idx').on(t.workspaceId),
  ],
)

/**
 * Attempts per endpoint per second: the rolling-minute cap sums an endpoint's last 61 seconds, a
 * bounded read whatever its volume. 61 whole seconds cover every 60 s window, so no rolling minute
 * ever holds more than the cap.
 */
export const webhookRate = table(
  'webhook_rate',
  {
    webhookId: text('webhook_id').notNull(),
    workspaceId: text('workspace_id').notNull(),
    /** Unix second. */
    second: integer('second').notNull(),
    attempts: integer('attempts').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.webhookId, t.second] }),
    index('webhook_rate_workspace_idx').on(t.workspaceId),
  ],
)
