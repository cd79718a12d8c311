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

/** One event of a batch (`emit.many`). */
export interface NewEvent {
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
 * The one way domain code records an event: a row in the `events` outbox (`evt_` + ULID).
 * Fan-out to webhook subscriptions hooks in here (`many`, which every event goes through), in the
 * same transaction.
 */
export function createEmit(store: Conn, clock: Clock): Emit {
  const many: Emit['many'] = async (workspaceId, list, opts = {}) => {
    if (!list.length) return []
    const now = clock.now()
    const rows = list.map(({ type, data, tenantId }) => ({
      id: newId('evt', now),
      type,
      workspaceId,
      tenantId: tenantId ?? null,
      data,
      createdAt: now,
    }))
    await (opts.tx ?? store).db.insert(events).values(rows)
    return rows.map((r) => r.id)
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

/** The events' teardown step of a workspace deletion. */
export async function deleteWorkspaceEvents(core: { db: Conn['db'] }, workspaceId: string): Promise<void> {
  await core.db.delete(events).where(eq(events.workspaceId, workspaceId))
}
