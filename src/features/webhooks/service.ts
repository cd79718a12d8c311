import { randomBytes } from 'node:crypto'
import { and, count, desc, eq, gte, inArray, lt } from 'drizzle-orm'
import type { Actor } from '../../access/model'
import type { Core } from '../../core'
import { deleteInBatches } from '../../db/batch-delete'
import type { Conn } from '../../db/store'
import { DELIVER_WEBHOOK, newDelivery } from '../../events/emit'
import {
  type DeliveryStatus,
  webhookAttempts,
  webhookDeliveries,
  webhookRate,
  webhooks,
} from '../../events/schema'
import { isoTime } from '../../shared/clock'
import { appError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import { outboundUrlProblem } from '../../shared/outbound'
import { decodeCursor, nextCursor, pageLimit } from '../../shared/pagination'
import type { Workspace } from '../workspaces/service'
import { WebhookErrors } from './errors'
import type { WebhookModel } from './model'

export type Webhook = typeof webhooks.$inferSelect
export type Delivery = typeof webhookDeliveries.$inferSelect

/** DESIGN "Webhooks": after a rotation the old secret signs beside the new one this long. */
const ROTATION_OVERLAP_MS = 24 * 3_600_000
const MAX_WEBHOOKS = 50

/** The sealing context of an endpoint's secret: a sealed value moved to another row does not open. */
export const secretContext = (webhookId: string) => `webhook:${webhookId}`
const newSecret = () => `whsec_${randomBytes(32).toString('base64url')}`

function webhookOut(w: Webhook): WebhookModel.Out {
  return {
    id: w.id,
    url: w.url,
    events: w.events,
    description: w.description,
    enabled: w.enabled,
    status: !w.enabled ? 'disabled' : w.pausedAt !== null ? 'paused' : 'active',
    created_at: isoTime(w.createdAt),
  }
}

const time = (ms: number | null) => (ms === null ? null : isoTime(ms))

function deliveryOut(d: Delivery): WebhookModel.Delivery {
  return {
    id: d.id,
    event_id: d.eventId,
    event_type: d.eventType,
    status: d.status,
    attempts: d.attempts,
    last_status_code: d.lastStatusCode,
    last_error: d.lastError,
    last_response: d.lastResponse,
    last_attempt_at: time(d.lastAttemptAt),
    // A delivery in flight holds a short lease in next_attempt_at; a finished one has none to show.
    next_attempt_at:
      d.status === 'delivered' || d.status === 'failed_permanent' ? null : time(d.nextAttemptAt),
    created_at: isoTime(d.createdAt),
  }
}

const inWorkspace = (workspaceId: string, webhookId: string) =>
  and(eq(webhooks.workspaceId, workspaceId), eq(webhooks.id, webhookId))

/**
 * A workspace's webhook endpoints (DESIGN "Webhooks"): `workspace:write` for everything (the
 * guard's). The URL is judged as stored (normalised by the URL parser) against the outbound guard;
 * the secret is sealed, shown once at creation and at each rotation. Changes are audited, never
 * emitted (SPEC: control-plane changes are in the audit log only).
 */
export function createWebhookService(core: Core) {
  const policy = core.config.webhooks

  /** The URL as it will be stored, or a 422 naming the field. */
  function checkedUrl(raw: string): string {
    const problem = outboundUrlProblem(raw, policy)
    if (problem) throw appError(WebhookErrors.URL_REFUSED, 422, { loc: ['body', 'url'], message: problem })
    return new URL(raw).href
  }

  async function find(db: Conn['db'], workspaceId: string, webhookId: string): Promise<Webhook> {
    const [row] = await db.select().from(webhooks).where(inWorkspace(workspaceId, webhookId)).limit(1)
    if (!row) throw appError(WebhookErrors.WEBHOOK_NOT_FOUND, 404)
    return row
  }

  /** Its deliveries waiting (queued or retrying) get a job now, each due at once. */
  async function resume(tx: Conn, hook: Webhook) {
    const now = core.clock.now()
    const waiting = await tx.db
      .update(webhookDeliveries)
      .set({ nextAttemptAt: now, updatedAt: now })
      .where(
        and(
          eq(webhookDeliveries.webhookId, hook.id),
          inArray(webhookDeliveries.status, ['queued', 'retrying']),
        ),
      )
      .returning({ id: webhookDeliveries.id })
    await core.jobs.enqueueMany(
      DELIVER_WEBHOOK,
      waiting.map((d) => ({ delivery_id: d.id })),
      { tx, workspaceId: hook.workspaceId },
    )
  }

  const audit = (tx: Conn, workspace: Workspace, by: Actor, action: string, id: string, changes = {}) =>
    core.audit(
      { workspaceId: workspace.id, actor: by, action, target: { type: 'webhook', id }, changes },
      { tx },
    )

  return {
    async list(workspace: Workspace) {
      const rows = await core.db
        .select()
        .from(webhooks)
        .where(eq(webhooks.workspaceId, workspace.id))
        .orderBy(desc(webhooks.createdAt), desc(webhooks.id))
      return { items: rows.map(webhookOut), total: rows.length }
    },

    async get(workspace: Workspace, webhookId: string) {
      return webhookOut(await find(core.db, workspace.id, webhookId))
    },

    /** 201 with the signing secret, shown this once. */
    async create(workspace: Workspace, by: Actor, input: WebhookModel.Create) {
      if (workspace.state === 'deleting') throw appError(WebhookErrors.WORKSPACE_DELETING, 409)
      const url = checkedUrl(input.url)
      const now = core.clock.now()
      const id = newId('wh', now)
      const secret = newSecret()
      return core.store.tx(async (tx) => {
        await tx.serialize(`webhooks:${workspace.id}`)
        const [{ n } = { n: 0 }] = await tx.db
          .select({ n: count() })
          .from(webhooks)
          .where(eq(webhooks.workspaceId, workspace.id))
        if (Number(n) >= MAX_WEBHOOKS) throw appError(WebhookErrors.TOO_MANY_WEBHOOKS, 409)
        const [row] = await tx.db
          .insert(webhooks)
          .values({
            id,
            workspaceId: workspace.id,
            url,
            events: [...input.events],
            description: input.description ?? null,
            enabled: true,
            secretSealed: core.secrets.seal(secret, secretContext(id)),
            createdAt: now,
            updatedAt: now,
          })
          .returning()
        await audit(tx, workspace, by, 'webhook.created', id, {
          url: { to: url },
          events: { to: input.events },
        })
        return { ...webhookOut(row!), secret }
      })
    },

    async update(workspace: Workspace, by: Actor, webhookId: string, input: WebhookModel.Update) {
      const url = input.url === undefined ? undefined : checkedUrl(input.url)
      return core.store.tx(async (tx) => {
        const before = await find(tx.db, workspace.id, webhookId)
        const now = core.clock.now()
        const [row] = await tx.db
          .update(webhooks)
          .set({
            ...(url !== undefined ? { url } : {}),
            ...(input.events ? { events: [...input.events] } : {}),
            ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
            ...(input.description !== undefined ? { description: input.description } : {}),
            updatedAt: now,
          })
          .where(inWorkspace(workspace.id, webhookId))
          .returning()
        const changes: Record<string, { from: unknown; to: unknown }> = {}
        if (url !== undefined && url !== before.url) changes.url = { from: before.url, to: url }
        if (input.events) changes.events = { from: before.events, to: input.events }
        if (input.enabled !== undefined && input.enabled !== before.enabled)
          changes.enabled = { from: before.enabled, to: input.enabled }
        if (input.description !== undefined)
          changes.description = { from: before.description, to: input.description }
        await audit(tx, workspace, by, 'webhook.updated', webhookId, changes)
        // Enabled again: what waited for it goes out (a paused endpoint waits for its reactivation).
        if (input.enabled && !before.enabled && row!.pausedAt === null) await resume(tx, row!)
        return webhookOut(row!)
      })
    },

    /** Deletes the endpoint with its deliveries (idempotent: 200 when already gone). */
    async remove(workspace: Workspace, by: Actor, webhookId: string) {
      await core.store.tx(async (tx) => {
        const [gone] = await tx.db.delete(webhooks).where(inWorkspace(workspace.id, webhookId)).returning()
        if (!gone) return
        await tx.db.delete(webhookDeliveries).where(eq(webhookDeliveries.webhookId, webhookId))
        await tx.db.delete(webhookAttempts).where(eq(webhookAttempts.webhookId, webhookId))
        await tx.db.delete(webhookRate).where(eq(webhookRate.webhookId, webhookId))
        await audit(tx, workspace, by, 'webhook.deleted', webhookId, { url: { from: gone.url } })
      })
    },

    /** A new secret, shown once; the previous one keeps signing beside it for 24 h. */
    async rotateSecret(workspace: Workspace, by: Actor, webhookId: string) {
      const secret = newSecret()
      return core.store.tx(async (tx) => {
        const before = await find(tx.db, workspace.id, webhookId)
        const now = core.clock.now()
        const [row] = await tx.db
          .update(webhooks)
          .set({
            secretSealed: core.secrets.seal(secret, secretContext(webhookId)),
            previousSecretSealed: before.secretSealed,
            previousSecretUntil: now + ROTATION_OVERLAP_MS,
            updatedAt: now,
          })
          .where(inWorkspace(workspace.id, webhookId))
          .returning()
        await audit(tx, workspace, by, 'webhook.secret_rotated', webhookId)
        return { ...webhookOut(row!), secret }
      })
    },

    /** A paused endpoint delivers again, starting with what waited. */
    async reactivate(workspace: Workspace, by: Actor, webhookId: string) {
      return core.store.tx(async (tx) => {
        const before = await find(tx.db, workspace.id, webhookId)
        const now = core.clock.now()
        const [row] = await tx.db
          .update(webhooks)
          .set({ pausedAt: null, failingSince: null, updatedAt: now })
          .where(inWorkspace(workspace.id, webhookId))
          .returning()
        if (before.pausedAt !== null) {
          await audit(tx, workspace, by, 'webhook.reactivated', webhookId)
          if (row!.enabled) await resume(tx, row!)
        }
        return webhookOut(row!)
      })
    },

    /** A `webhook.test` event to this endpoint alone. */
    async sendTest(workspace: Workspace, webhookId: string) {
      return core.store.tx(async (tx) => {
        const hook = await find(tx.db, workspace.id, webhookId)
        const eventId = await core.emit('webhook.test', workspace.id, { webhook_id: hook.id }, { tx })
        const row = newDelivery(hook.id, workspace.id, eventId, 'webhook.test', core.clock.now())
        await tx.db.insert(webhookDeliveries).values(row)
        if (hook.enabled && hook.pausedAt === null)
          await core.jobs.enqueue(DELIVER_WEBHOOK, { delivery_id: row.id }, { tx, workspaceId: workspace.id })
        return { delivery_id: row.id, event_id: eventId }
      })
    },

    /** Newest first, pageable by `cursor` (the last id of the previous page). */
    async deliveries(
      workspace: Workspace,
      webhookId: string,
      query: { status?: DeliveryStatus; limit?: number; cursor?: string },
    ) {
      await find(core.db, workspace.id, webhookId)
      const limit = pageLimit(query.limit)
      const where = and(
        eq(webhookDeliveries.webhookId, webhookId),
        query.status ? eq(webhookDeliveries.status, query.status) : undefined,
      )
      const rows = await core.db
        .select()
        .from(webhookDeliveries)
        .where(and(where, query.cursor ? lt(webhookDeliveries.id, decodeCursor(query.cursor)) : undefined))
        .orderBy(desc(webhookDeliveries.id))
        .limit(limit + 1)
      const [{ n } = { n: 0 }] = await core.db.select({ n: count() }).from(webhookDeliveries).where(where)
      const page = rows.slice(0, limit)
      return {
        items: page.map(deliveryOut),
        total: Number(n),
        next_cursor: nextCursor(rows, limit, (d) => d.id),
      }
    },

    /** Sends a delivery again from a fresh schedule, whatever its state. */
    async redeliver(workspace: Workspace, by: Actor, webhookId: string, deliveryId: string) {
      return core.store.tx(async (tx) => {
        const hook = await find(tx.db, workspace.id, webhookId)
        const now = core.clock.now()
        const [row] = await tx.db
          .update(webhookDeliveries)
          .set({ status: 'queued', firstFailedAt: null, nextAttemptAt: now, claimedBy: null, updatedAt: now })
          .where(and(eq(webhookDeliveries.webhookId, hook.id), eq(webhookDeliveries.id, deliveryId)))
          .returning()
        if (!row) throw appError(WebhookErrors.DELIVERY_NOT_FOUND, 404)
        await audit(tx, workspace, by, 'webhook.redelivered', webhookId, { delivery_id: { to: deliveryId } })
        if (hook.enabled && hook.pausedAt === null)
          await core.jobs.enqueue(DELIVER_WEBHOOK, { delivery_id: row.id }, { tx, workspaceId: workspace.id })
        return deliveryOut(row)
      })
    },
  }
}

/** The window of an endpoint's success rate on the dashboard. */
const SUCCESS_RATE_WINDOW_MS = 24 * 3_600_000

/**
 * Each endpoint's finished attempts of the last 24 h, and how many of those were 2xx (`ok`), by
 * webhook id; an endpoint without any is absent. Attempts still in flight do not count yet.
 */
export async function webhookSuccessRates(
  core: Core,
  workspace: Workspace,
): Promise<Map<string, { ok: number; total: number }>> {
  const rows = await core.db
    .select({ webhookId: webhookAttempts.webhookId, ok: webhookAttempts.ok, n: count() })
    .from(webhookAttempts)
    .where(
      and(
        eq(webhookAttempts.workspaceId, workspace.id),
        gte(webhookAttempts.startedAt, core.clock.now() - SUCCESS_RATE_WINDOW_MS),
      ),
    )
    .groupBy(webhookAttempts.webhookId, webhookAttempts.ok)
  const rates = new Map<string, { ok: number; total: number }>()
  for (const { webhookId, ok, n } of rows) {
    if (ok === null) continue
    const rate = rates.get(webhookId) ?? { ok: 0, total: 0 }
    rate.total += Number(n)
    if (ok) rate.ok += Number(n)
    rates.set(webhookId, rate)
  }
  return rates
}

/** Kept for the dashboard's success rate and the warning's window; older attempts go. */
const ATTEMPTS_KEPT_MS = 48 * 3_600_000
/** The periodic purge's share: old attempts and spent rate seconds (finished jobs are the queue's). */
export async function purgeWebhookRows(core: Core): Promise<Record<string, number>> {
  const now = core.clock.now()
  return {
    webhook_attempts: await deleteInBatches(core.store, 'webhook_attempts', 'started_at <= $1', [
      now - ATTEMPTS_KEPT_MS,
    ]),
    webhook_rate: await deleteInBatches(core.store, 'webhook_rate', 'second <= $1', [
      Math.floor(now / 1000) - 120,
    ]),
  }
}
