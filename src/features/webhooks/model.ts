import { t } from 'elysia'
import { SUBSCRIBABLE_EVENTS } from '../../events/types'
import { resourceId } from '../../shared/formats'
import { nextCursorField } from '../../shared/pagination'

const eventType = t.Union(
  SUBSCRIBABLE_EVENTS.map((e) => t.Literal(e)),
  { description: 'An event type of SPEC "Outgoing webhook events"' },
)

/** DESIGN "Webhooks": signed outgoing events, their subscriptions and deliveries. */
export namespace WebhookModel {
  export const params = t.Object({ workspace_id: t.String({ format: 'uuid' }), webhook_id: resourceId() })
  export const deliveryParams = t.Object({
    workspace_id: t.String({ format: 'uuid' }),
    webhook_id: resourceId(),
    delivery_id: resourceId(),
  })

  const url = t.String({
    minLength: 1,
    maxLength: 2000,
    description: 'https (http only when WEBHOOKS_ALLOW_HTTP=true); no private, loopback or metadata address',
  })
  const events = t.Array(eventType, {
    minItems: 1,
    maxItems: SUBSCRIBABLE_EVENTS.length,
    uniqueItems: true,
    errorMessage: { minItems: 'Choose at least one event type.', uniqueItems: 'List each event type once.' },
  })
  const description = t.Nullable(t.String({ maxLength: 500 }))

  export const create = t.Object(
    { url, events, description: t.Optional(description) },
    { additionalProperties: false },
  )
  export type Create = typeof create.static

  export const update = t.Object(
    {
      url: t.Optional(url),
      events: t.Optional(events),
      enabled: t.Optional(t.Boolean()),
      description: t.Optional(description),
    },
    { additionalProperties: false, minProperties: 1 },
  )
  export type Update = typeof update.static

  export const out = t.Object({
    id: t.String({ description: 'wh_ + ULID' }),
    url: t.String(),
    events: t.Array(t.String()),
    description: t.Nullable(t.String()),
    enabled: t.Boolean(),
    status: t.Union([t.Literal('active'), t.Literal('paused'), t.Literal('disabled')], {
      description: '`paused`: no success for 24 h; its deliveries wait until it is reactivated',
    }),
    created_at: t.String(),
  })
  export type Out = typeof out.static

  export const withSecret = t.Composite([
    out,
    t.Object({ secret: t.String({ description: 'whsec_…: shown in this answer only' }) }),
  ])

  export const list = t.Object({ items: t.Array(out), total: t.Integer() })

  export const deliveryStatus = t.Union([
    t.Literal('queued'),
    t.Literal('retrying'),
    t.Literal('delivered'),
    t.Literal('failed_permanent'),
  ])

  export const delivery = t.Object({
    id: t.String({ description: 'dlv_ + ULID' }),
    event_id: t.String(),
    event_type: t.String(),
    status: deliveryStatus,
    attempts: t.Integer(),
    last_status_code: t.Nullable(t.Integer()),
    last_error: t.Nullable(t.String()),
    last_response: t.Nullable(t.String({ description: 'The start of the last answer (at most 1 KiB)' })),
    last_attempt_at: t.Nullable(t.String()),
    next_attempt_at: t.Nullable(t.String()),
    created_at: t.String(),
  })
  export type Delivery = typeof delivery.static

  export const deliveriesQuery = t.Object({
    status: t.Optional(deliveryStatus),
    // 1..200 and an opaque cursor, checked by the shared paging rules (shared/pagination.ts).
    limit: t.Optional(t.Integer({ description: 'Page size, 1..200 (default 50)' })),
    cursor: t.Optional(t.String({ maxLength: 200, description: 'Opaque, from `next_cursor`' })),
  })
  export const deliveries = t.Object({
    items: t.Array(delivery),
    total: t.Integer(),
    next_cursor: nextCursorField,
  })

  export const tested = t.Object({ delivery_id: t.String(), event_id: t.String() })
  export const deleted = t.Object({ deleted: t.Literal(true) })
}
