import { eq } from 'drizzle-orm'
import type { Conn } from '../db/store'
import type { Clock } from '../shared/clock'
import { newId } from '../shared/ids'
import { events } from './schema'

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

export interface EmitOptions {
  tenantId?: string | null
  /** Write in the caller's transaction so the event exists exactly when the change does. */
  tx?: Conn
}

export type Emit = (
  type: EventType,
  workspaceId: string,
  data: Record<string, unknown>,
  opts?: EmitOptions,
) => Promise<string>

/**
 * The one way domain code records an event: a row in the `events` outbox (`evt_` + ULID).
 * Fan-out to webhook subscriptions hooks in here, in the same transaction.
 */
export function createEmit(store: Conn, clock: Clock): Emit {
  return async (type, workspaceId, data, opts = {}) => {
    const now = clock.now()
    const id = newId('evt', now)
    await (opts.tx ?? store).db
      .insert(events)
      .values({ id, type, workspaceId, tenantId: opts.tenantId ?? null, data, createdAt: now })
    return id
  }
}

/** The events' teardown step of a workspace deletion. */
export async function deleteWorkspaceEvents(core: { db: Conn['db'] }, workspaceId: string): Promise<void> {
  await core.db.delete(events).where(eq(events.workspaceId, workspaceId))
}
