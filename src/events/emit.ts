import { and, eq } from 'drizzle-orm'
import type { Conn, Store } from '../db/store'
import type { JobQueue } from '../queue/job-queue'
import type { Clock } from '../shared/clock'
import { newId } from '../shared/ids'
import { events, webhookAttempts, webhookDeliveries, webhookRate, webhooks } from './schema'
import type { EventType } from './types'

/** The job that posts one delivery (features/webhooks/jobs.ts); its payload is the delivery id only. */
export const DELIVER_WEBHOOK = 'webhook.deliver'

export { type EventType, SUBSCRIBABLE_EVENTS, type SubscribableEvent } from './types'

interface EmitOptions {
  tenantId?: string | null
  /** Write in the caller's transaction so the event exists exactly when the change does. */
  tx?: Conn
}

/** One event of a batch (`emit.many`). */
interface NewEvent {
  type: EventType
  data: Record<string, unknown>
  tenantId?: string | null
}

export interface Emit {
  (type: EventType, workspaceId: string, data: Record<string, unknown>, opts?: EmitOptions): Promise<string>
  /** Events of one workspace in one statement (a batch's), in `tx`; their ids in order. */
  many(workspaceId: string, list: NewEvent[], opts?: Pick<EmitOptions, 'tx'>): Promise<string[]>
}

/**
 * The one way domain code records an event: a row in the `events` outbox (`evt_` + ULID), and in
 * the same transaction one delivery per enabled subscription of the workspace that lists its type,
 * each with its job (a paused endpoint's deliveries wait, queued, without one).
 */
export function createEmit(store: Store, clock: Clock, jobs: JobQueue): Emit {
  async function write(tx: Conn, workspaceId: string, list: NewEvent[]): Promise<string[]> {
    const now = clock.now()
    const rows = list.map(({ type, data, tenantId }) => ({
      id: newId('evt', now),
      type,
      workspaceId,
      tenantId: tenantId ?? null,
      data,
      createdAt: now,
    }))
    await tx.db.insert(events).values(rows)
    const subscribed = await tx.db
      .select({ id: webhooks.id, events: webhooks.events, pausedAt: webhooks.pausedAt })
      .from(webhooks)
      .where(and(eq(webhooks.workspaceId, workspaceId), eq(webhooks.enabled, true)))
    const deliveries = subscribed.flatMap((hook) =>
      rows
        .filter((e) => hook.events.includes(e.type))
        .map((e) => ({ hook, row: newDelivery(hook.id, workspaceId, e.id, e.type, now) })),
    )
    if (deliveries.length) {
      for (let i = 0; i < deliveries.length; i += 500) {
        await tx.db.insert(webhookDeliveries).values(deliveries.slice(i, i + 500).map((d) => d.row))
      }
      const due = deliveries.filter((d) => d.hook.pausedAt === null)
      await jobs.enqueueMany(
        DELIVER_WEBHOOK,
        due.map((d) => ({ delivery_id: d.row.id })),
        { tx, workspaceId },
      )
    }
    return rows.map((r) => r.id)
  }
  const many: Emit['many'] = async (workspaceId, list, opts = {}) => {
    if (!list.length) return []
    if (opts.tx) return write(opts.tx, workspaceId, list)
    return store.tx((tx) => write(tx, workspaceId, list))
  }
  const emit = async (
    type: EventType,
    workspaceId: string,
    data: Record<string, unknown>,
    opts: EmitOptions = {},
  ) => {
    const [id] = await many(workspaceId, [{ type, data, tenantId: opts.tenantId }], opts)
    return id!
  }
  return Object.assign(emit, { many })
}

/** A delivery row of one event for one endpoint, waiting for its first attempt. */
export function newDelivery(
  webhookId: string,
  workspaceId: string,
  eventId: string,
  eventType: string,
  now: number,
) {
  return {
    id: newId('dlv', now),
    webhookId,
    workspaceId,
    eventId,
    eventType,
    status: 'queued' as const,
    attempts: 0,
    nextAttemptAt: now,
    createdAt: now,
    updatedAt: now,
  }
}

/** The events' teardown step of a workspace deletion. */
export async function deleteWorkspaceEvents(core: { db: Conn['db'] }, workspaceId: string): Promise<void> {
  await core.db.delete(events).where(eq(events.workspaceId, workspaceId))
  await core.db.delete(webhookDeliveries).where(eq(webhookDeliveries.workspaceId, workspaceId))
  await core.db.delete(webhookAttempts).where(eq(webhookAttempts.workspaceId, workspaceId))
  await core.db.delete(webhookRate).where(eq(webhookRate.workspaceId, workspaceId))
  await core.db.delete(webhooks).where(eq(webhooks.workspaceId, workspaceId))
}
