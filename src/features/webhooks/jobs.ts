import { createHmac } from 'node:crypto'
import { and, asc, count, eq, gt, gte, inArray, isNotNull, isNull, lte, or, sql } from 'drizzle-orm'
import type { Core } from '../../core'
import type { Conn } from '../../db/store'
import { DELIVER_WEBHOOK } from '../../events/emit'
import { events, webhookAttempts, webhookDeliveries, webhookRate, webhooks } from '../../events/schema'
import type { JobHandler } from '../../jobs/runner'
import { isoTime } from '../../shared/clock'
import { newId } from '../../shared/ids'
import { OutboundRefused, outboundFetch } from '../../shared/outbound'
import { sendMail } from '../mail/service'
import { ownerEmails } from '../workspaces/service'
import { type Delivery, secretContext, type Webhook } from './service'

const MINUTE = 60_000
const HOUR = 60 * MINUTE
/** DESIGN: retries at these times after a delivery's first failure; when the last fails, it is final. */
export const RETRY_SCHEDULE_MS = [
  MINUTE,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  6 * HOUR,
  12 * HOUR,
  24 * HOUR,
  48 * HOUR,
]
/** SPEC "Limits": an endpoint failing without a success this long is paused. */
export const PAUSE_AFTER_MS = 24 * HOUR
/** SPEC: a receiver that has not answered within this counts as a failure. */
export const TIMEOUT_MS = 10_000
/**
 * How long a delivery in flight stays claimed against other jobs; its own job, run again after its
 * node died (the job lease, or the node's restart), resends at once.
 */
const IN_FLIGHT_MS = TIMEOUT_MS + 20_000
/** The job that mails a failing endpoint's owners. */
const WARN_OWNERS = 'webhook.warn_owners'
/** Seconds the rolling-minute cap sums: 61 whole seconds cover every 60-second window. */
const RATE_SECONDS = 61
/** SPEC "Limits": owners are warned when more than this share failed over the window, once a day. */
const WARN_SHARE = 0.05
const WARN_WINDOW_MS = 30 * MINUTE
const WARN_EVERY_MS = 24 * HOUR
/** How much of an answer the delivery log keeps. */
const RESPONSE_KEPT = 1024

/** `t=<unix>,v1=<hex>[,v1=<hex>]`: HMAC-SHA256 of `<t>.<body>` with each secret that signs now. */
export function signature(secrets: string[], unix: number, body: string): string {
  const macs = secrets.map((s) => `v1=${createHmac('sha256', s).update(`${unix}.${body}`).digest('hex')}`)
  return [`t=${unix}`, ...macs].join(',')
}

/** The first retry time still ahead, or null when the schedule is spent (the delivery is final). */
export function nextRetry(firstFailedAt: number, now: number): number | null {
  for (const offset of RETRY_SCHEDULE_MS) if (firstFailedAt + offset > now) return firstFailedAt + offset
  return null
}

type Plan =
  | { kind: 'skip' }
  | { kind: 'wait'; until: number; workspaceId: string }
  | { kind: 'send'; delivery: Delivery; hook: Webhook; attemptId: string }

/**
 * One attempt of one delivery (SPEC "Webhook delivery"). Claimed under its endpoint's lock: the
 * attempt is counted before it is sent, against the endpoint's rolling minute and its in-flight
 * cap, on every node at once (an endpoint over either waits, rescheduled, never dropped). Then the
 * POST, then its outcome: delivered, or the next retry of the schedule as a new job, or final.
 * A node killed mid-POST leaves the delivery claimed for IN_FLIGHT_MS; the job's lease brings it
 * back and it is sent again with the same event id (at-least-once).
 */
export async function deliver(core: Core, deliveryId: string, jobId: string): Promise<void> {
  const { perMinute, endpointConcurrency } = core.config.webhooks
  const plan = await core.store.tx(async (tx): Promise<Plan> => {
    const now = core.clock.now()
    const [delivery] = await tx.db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, deliveryId))
    if (!delivery || (delivery.status !== 'queued' && delivery.status !== 'retrying')) return { kind: 'skip' }
    // Not due yet (an earlier job of a resumed delivery, or another job's attempt in flight): this
    // job comes back then. Its own attempt, cut off by a dead node, goes again at once.
    const due = delivery.claimedBy === jobId || (delivery.nextAttemptAt ?? now) <= now
    if (!due) return { kind: 'wait', until: delivery.nextAttemptAt!, workspaceId: delivery.workspaceId }
    await tx.serialize(`webhook:${delivery.webhookId}`)
    const [hook] = await tx.db.select().from(webhooks).where(eq(webhooks.id, delivery.webhookId))
    // Disabled or paused: the delivery waits, queued, for the endpoint to be enabled or reactivated.
    if (!hook?.enabled || hook.pausedAt !== null) return { kind: 'skip' }
    const second = Math.floor(now / 1000)
    const window = await tx.db
      .select({ second: webhookRate.second, attempts: webhookRate.attempts })
      .from(webhookRate)
      .where(and(eq(webhookRate.webhookId, hook.id), gte(webhookRate.second, second - RATE_SECONDS + 1)))
      .orderBy(asc(webhookRate.second))
    let inWindow = window.reduce((sum, b) => sum + b.attempts, 0)
    if (inWindow >= perMinute) {
      // Full: wait until enough of its oldest seconds have left it.
      let leaves = second - RATE_SECONDS + 1
      for (const b of window) {
        inWindow -= b.attempts
        leaves = b.second
        if (inWindow < perMinute) break
      }
      return { kind: 'wait', until: (leaves + RATE_SECONDS) * 1000, workspaceId: hook.workspaceId }
    }
    const [{ n } = { n: 0 }] = await tx.db
      .select({ n: count() })
      .from(webhookAttempts)
      .where(
        and(
          eq(webhookAttempts.webhookId, hook.id),
          isNull(webhookAttempts.finishedAt),
          gt(webhookAttempts.startedAt, now - IN_FLIGHT_MS),
        ),
      )
    if (Number(n) >= endpointConcurrency)
      return { kind: 'wait', until: now + 250, workspaceId: hook.workspaceId }
    await tx.db
      .insert(webhookRate)
      .values({ webhookId: hook.id, workspaceId: hook.workspaceId, second, attempts: 1 })
      .onConflictDoUpdate({
        target: [webhookRate.webhookId, webhookRate.second],
        set: { attempts: sql`${webhookRate.attempts} + 1` },
      })
    const attemptId = newId('att', now)
    await tx.db.insert(webhookAttempts).values({
      id: attemptId,
      webhookId: hook.id,
      workspaceId: hook.workspaceId,
      deliveryId,
      startedAt: now,
    })
    await tx.db
      .update(webhookDeliveries)
      .set({
        nextAttemptAt: now + IN_FLIGHT_MS,
        claimedBy: jobId,
        lastAttemptAt: now,
        attempts: delivery.attempts + 1,
        updatedAt: now,
      })
      .where(eq(webhookDeliveries.id, deliveryId))
    return { kind: 'send', delivery, hook, attemptId }
  })
  if (plan.kind === 'skip') return
  if (plan.kind === 'wait') {
    await core.jobs.enqueue(
      DELIVER_WEBHOOK,
      { delivery_id: deliveryId },
      { runAt: plan.until, workspaceId: plan.workspaceId },
    )
    return
  }
  const outcome = await post(core, plan.hook, plan.delivery)
  await record(core, plan.hook.id, plan.delivery, { id: plan.attemptId, jobId }, outcome)
}

interface Outcome {
  ok: boolean
  statusCode: number | null
  error: string | null
  response: string | null
}

/** The POST itself: SPEC's payload, signed with every secret that signs now. */
async function post(core: Core, hook: Webhook, delivery: Delivery): Promise<Outcome> {
  const [event] = await core.db.select().from(events).where(eq(events.id, delivery.eventId))
  if (!event) return { ok: false, statusCode: null, error: 'The event no longer exists', response: null }
  const body = JSON.stringify({
    id: event.id,
    type: event.type,
    workspace_id: event.workspaceId,
    tenant_id: event.tenantId,
    created_at: isoTime(event.createdAt),
    data: event.data,
  })
  const now = core.clock.now()
  const secrets = [core.secrets.open(hook.secretSealed, secretContext(hook.id))]
  if (hook.previousSecretSealed && hook.previousSecretUntil !== null && hook.previousSecretUntil > now)
    secrets.push(core.secrets.open(hook.previousSecretSealed, secretContext(hook.id)))
  try {
    const res = await outboundFetch(
      hook.url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Gatehouse-Webhooks/1',
          'service-signature': signature(secrets, Math.floor(now / 1000), body),
          'service-webhook-id': event.id,
        },
        body,
        timeoutMs: TIMEOUT_MS,
      },
      core.config.webhooks,
    )
    const response = (await res.text().catch(() => '')).slice(0, RESPONSE_KEPT)
    const ok = res.status >= 200 && res.status < 300
    return { ok, statusCode: res.status, error: ok ? null : `The endpoint answered ${res.status}`, response }
  } catch (e) {
    const error =
      e instanceof OutboundRefused
        ? e.message
        : e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError')
          ? `No answer within ${TIMEOUT_MS / 1000} s`
          : `Could not connect: ${e instanceof Error ? e.message : String(e)}`
    return { ok: false, statusCode: null, error, response: null }
  }
}

/** The attempt's outcome on the delivery and its endpoint; a failure schedules the next retry. */
async function record(
  core: Core,
  webhookId: string,
  delivery: Delivery,
  attempt: { id: string; jobId: string },
  out: Outcome,
) {
  const { jobId } = attempt
  await core.store.tx(async (tx) => {
    const now = core.clock.now()
    await tx.db
      .update(webhookAttempts)
      .set({ finishedAt: now, ok: out.ok })
      .where(eq(webhookAttempts.id, attempt.id))
    const common = {
      claimedBy: null,
      lastStatusCode: out.statusCode,
      lastError: out.error,
      lastResponse: out.response,
      updatedAt: now,
    }
    // Deleted or redelivered meanwhile (a redelivery drops the claim): this attempt's outcome no
    // longer decides anything.
    const current = and(
      eq(webhookDeliveries.id, delivery.id),
      inArray(webhookDeliveries.status, ['queued', 'retrying']),
      eq(webhookDeliveries.claimedBy, jobId),
    )
    if (out.ok) {
      await tx.db
        .update(webhookDeliveries)
        .set({ ...common, status: 'delivered', deliveredAt: now, nextAttemptAt: null })
        .where(current)
      // Written when it says something new (a failure streak ends, or a minute passed): at a high
      // rate every success would otherwise rewrite the endpoint's row.
      await tx.db
        .update(webhooks)
        .set({ lastSuccessAt: now, failingSince: null })
        .where(
          and(
            eq(webhooks.id, webhookId),
            or(
              isNotNull(webhooks.failingSince),
              isNull(webhooks.lastSuccessAt),
              lte(webhooks.lastSuccessAt, now - MINUTE),
            ),
          ),
        )
      return
    }
    const firstFailedAt = delivery.firstFailedAt ?? now
    const next = nextRetry(firstFailedAt, now)
    const [updated] = await tx.db
      .update(webhookDeliveries)
      .set({
        ...common,
        status: next === null ? 'failed_permanent' : 'retrying',
        firstFailedAt,
        nextAttemptAt: next,
      })
      .where(current)
      .returning({ id: webhookDeliveries.id })
    if (updated && next !== null)
      await core.jobs.enqueue(
        DELIVER_WEBHOOK,
        { delivery_id: delivery.id },
        { tx, runAt: next, workspaceId: delivery.workspaceId },
      )
    const [hook] = await tx.db.select().from(webhooks).where(eq(webhooks.id, webhookId))
    if (!hook) return
    const failingSince = hook.failingSince ?? now
    const warn = await failingTooOften(tx, hook, now)
    await tx.db
      .update(webhooks)
      .set({
        failingSince,
        ...(hook.pausedAt === null && now - failingSince >= PAUSE_AFTER_MS ? { pausedAt: now } : {}),
      })
      .where(eq(webhooks.id, webhookId))
    if (!warn) return
    // Claimed by one statement: attempts failing at once on several nodes send one warning.
    const [claimed] = await tx.db
      .update(webhooks)
      .set({ warnedAt: now })
      .where(
        and(
          eq(webhooks.id, webhookId),
          or(isNull(webhooks.warnedAt), lte(webhooks.warnedAt, now - WARN_EVERY_MS)),
        ),
      )
      .returning({ id: webhooks.id })
    // The mail goes out from a job of its own: the owners are read and the mail queued outside this
    // transaction, which holds the endpoint's row.
    if (claimed)
      await core.jobs.enqueue(
        WARN_OWNERS,
        { webhook_id: hook.id, ...warn },
        { tx, workspaceId: hook.workspaceId },
      )
  })
}

/**
 * SPEC "Delivery" rule 5: more than 5% of an endpoint's attempts of the last 30 minutes failed, and
 * its owners were not warned in the last day: the share to tell them, else null.
 */
async function failingTooOften(
  tx: Conn,
  hook: Webhook,
  now: number,
): Promise<{ failed: number; total: number } | null> {
  if (hook.warnedAt !== null && now - hook.warnedAt < WARN_EVERY_MS) return null
  const window = and(
    eq(webhookAttempts.webhookId, hook.id),
    gt(webhookAttempts.startedAt, now - WARN_WINDOW_MS),
  )
  const [all] = await tx.db
    .select({ total: count(), failed: count(sql`CASE WHEN ${webhookAttempts.ok} THEN NULL ELSE 1 END`) })
    .from(webhookAttempts)
    .where(and(window, isNotNull(webhookAttempts.finishedAt)))
  const total = Number(all?.total ?? 0)
  const failed = Number(all?.failed ?? 0)
  return total > 0 && failed / total > WARN_SHARE ? { failed, total } : null
}

/** One mail to each owner: which endpoint, how badly, where to look. Never a secret or a payload. */
async function warnOwners(core: Core, webhookId: string, share: { failed: number; total: number }) {
  const [hook] = await core.db.select().from(webhooks).where(eq(webhooks.id, webhookId))
  if (!hook) return
  const page = `${core.config.baseUrl}/app/workspaces/${hook.workspaceId}/settings/webhooks`
  const percent = Math.round((100 * share.failed) / share.total)
  for (const to of await ownerEmails(core, hook.workspaceId)) {
    await sendMail(core, {
      to,
      workspaceId: hook.workspaceId,
      subject: `Webhook deliveries to ${new URL(hook.url).host} are failing`,
      text: [
        `${share.failed} of the last ${share.total} deliveries to ${hook.url} failed (${percent}%) in the last 30 minutes.`,
        'Failed deliveries are retried for 48 hours; an endpoint that fails for 24 hours is paused until you reactivate it.',
        `See the delivery log: ${page}`,
        'You get this warning at most once a day per endpoint.',
      ].join('\n\n'),
    })
  }
}

export function webhookJobs(): JobHandler<Core, never>[] {
  return [
    {
      kind: DELIVER_WEBHOOK,
      run: (payload: { delivery_id: string }, core, job) => deliver(core, payload.delivery_id, job.id),
    } as JobHandler<Core, never>,
    {
      kind: WARN_OWNERS,
      run: (p: { webhook_id: string; failed: number; total: number }, core) =>
        warnOwners(core, p.webhook_id, p),
    } as JobHandler<Core, never>,
  ]
}
