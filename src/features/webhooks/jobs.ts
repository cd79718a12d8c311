import { createHmac } from 'node:crypto'
import { and, count, eq, gt, inArray, isNotNull, isNull, lte, or, sql } from 'drizzle-orm'
import type { Core } from '../../core'
import type { Conn } from '../../db/store'
import { DELIVER_WEBHOOK } from '../../events/emit'
import { webhookAttempts, webhookDeliveries, webhooks } from '../../events/schema'
import type { JobHandler } from '../../jobs/runner'
import { isoTime } from '../../shared/clock'
import { newId } from '../../shared/ids'
import { OutboundRefused, outboundFetch } from '../../shared/outbound'
import { sendMail } from '../mail/service'
import { ownerEmails } from '../workspaces/service'
import { secretContext, type Webhook } from './service'

const MINUTE = 60_000
const HOUR = 60 * MINUTE
/** DESIGN: retries at these times after a delivery's first failure; when the last fails, it is final. */
const RETRY_SCHEDULE_MS = [
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
const PAUSE_AFTER_MS = 24 * HOUR
/** SPEC: a receiver that has not answered within this counts as a failure. */
export const TIMEOUT_MS = 10_000
/**
 * How long a delivery in flight stays claimed against other jobs; its own job, run again after its
 * node died (the job lease, or the node's restart), resends at once.
 */
const IN_FLIGHT_MS = TIMEOUT_MS + 20_000
/** The job that mails a failing endpoint's owners. */
const WARN_OWNERS = 'webhook.warn_owners'
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
function nextRetry(firstFailedAt: number, now: number): number | null {
  for (const offset of RETRY_SCHEDULE_MS) if (firstFailedAt + offset > now) return firstFailedAt + offset
  return null
}

/** What an attempt needs of its delivery, its endpoint and its event: one read (a raw statement). */
interface Claimed {
  id: string
  webhook_id: string
  workspace_id: string
  event_id: string
  status: string
  attempts: number
  first_failed_at: number | null
  next_attempt_at: number | null
  claimed_by: string | null
  url: string
  enabled: boolean | number
  paused_at: number | null
  secret_sealed: string
  previous_secret_sealed: string | null
  previous_secret_until: number | null
  /** The event's; null when it is gone. */
  type: string | null
  tenant_id: string | null
  created_at: number | null
  /** The event's data as stored: JSON text, sent as it is. */
  data: string | null
}

type Plan =
  | { kind: 'skip' }
  | { kind: 'wait'; until: number; workspaceId: string }
  | { kind: 'send'; claimed: Claimed; attemptId: string }

// Raw statements on the delivery path (one delivery runs ~12 of them, and drizzle's building of
// each cost more than the statement itself: a third of a delivery's CPU).
const CLAIMED = `
  SELECT d.id, d.webhook_id, d.workspace_id, d.event_id, d.status, d.attempts, d.first_failed_at,
         d.next_attempt_at, d.claimed_by, w.url, w.enabled, w.paused_at, w.secret_sealed,
         w.previous_secret_sealed, w.previous_secret_until, e.type, e.tenant_id, e.created_at, e.data
  FROM webhook_deliveries d
  JOIN webhooks w ON w.id = d.webhook_id
  LEFT JOIN events e ON e.id = d.event_id
  WHERE d.id = $1`
const IN_FLIGHT =
  'SELECT COUNT(*) AS n FROM webhook_attempts WHERE webhook_id = $1 AND finished_at IS NULL AND started_at > $2'
const NEW_ATTEMPT =
  'INSERT INTO webhook_attempts (id, webhook_id, workspace_id, delivery_id, started_at) VALUES ($1, $2, $3, $4, $5)'
const CLAIM = `
  UPDATE webhook_deliveries
  SET next_attempt_at = $2, claimed_by = $3, last_attempt_at = $4, attempts = attempts + 1, updated_at = $4
  WHERE id = $1`

/**
 * One attempt of one delivery (SPEC "Webhook delivery"). Claimed under its endpoint's lock: the
 * attempt is counted before it is sent, against the endpoint's rolling minute and its in-flight
 * cap, on every node at once (an endpoint over either waits, rescheduled, never dropped). Then the
 * POST, then its outcome: delivered, or the next retry of the schedule as a new job, or final.
 * A node killed mid-POST leaves the delivery claimed for IN_FLIGHT_MS; the job's lease brings it
 * back and it is sent again with the same event id (at-least-once).
 */
export async function deliver(core: Core, deliveryId: string, jobId: string): Promise<void> {
  const plan = await core.store.tx(async (tx): Promise<Plan> => {
    const now = core.clock.now()
    // No row: the delivery or its endpoint was deleted.
    const [d] = await tx.query<Claimed>(CLAIMED, [deliveryId])
    if (!d || (d.status !== 'queued' && d.status !== 'retrying')) return { kind: 'skip' }
    // Not due yet (an earlier job of a resumed delivery, or another job's attempt in flight): this
    // job comes back then. Its own attempt, cut off by a dead node, goes again at once.
    const due = d.claimed_by === jobId || (d.next_attempt_at ?? now) <= now
    if (!due) return { kind: 'wait', until: Number(d.next_attempt_at), workspaceId: d.workspace_id }
    // Disabled or paused: the delivery waits, queued, for the endpoint to be enabled or reactivated.
    if (!d.enabled || d.paused_at !== null) return { kind: 'skip' }
    await tx.serialize(`webhook:${d.webhook_id}`)
    const egress = await core.limiter.take(
      'webhookEgress',
      d.webhook_id,
      {
        tx,
        workspaceId: d.workspace_id,
        inFlight: async () =>
          Number((await tx.query<{ n: number }>(IN_FLIGHT, [d.webhook_id, now - IN_FLIGHT_MS]))[0]?.n ?? 0),
      },
      now,
    )
    if (!egress.allowed) return { kind: 'wait', until: egress.retryAt, workspaceId: d.workspace_id }
    const attemptId = newId('att', now)
    await tx.exec(NEW_ATTEMPT, [attemptId, d.webhook_id, d.workspace_id, deliveryId, now])
    await tx.exec(CLAIM, [deliveryId, now + IN_FLIGHT_MS, jobId, now])
    return { kind: 'send', claimed: d, attemptId }
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
  const outcome = await post(core, plan.claimed)
  await record(core, plan.claimed, { id: plan.attemptId, jobId }, outcome)
}

interface Outcome {
  ok: boolean
  statusCode: number | null
  error: string | null
  response: string | null
}

/** The POST itself: SPEC's payload, signed with every secret that signs now. */
async function post(core: Core, d: Claimed): Promise<Outcome> {
  if (d.type === null || d.created_at === null || d.data === null)
    return { ok: false, statusCode: null, error: 'The event no longer exists', response: null }
  // SPEC's payload; `data` goes as stored (JSON text written by emit()).
  const head = JSON.stringify({
    id: d.event_id,
    type: d.type,
    workspace_id: d.workspace_id,
    tenant_id: d.tenant_id,
    created_at: isoTime(Number(d.created_at)),
  })
  const body = `${head.slice(0, -1)},"data":${d.data}}`
  const now = core.clock.now()
  const secrets = [core.secrets.open(d.secret_sealed, secretContext(d.webhook_id))]
  if (d.previous_secret_sealed && d.previous_secret_until !== null && Number(d.previous_secret_until) > now)
    secrets.push(core.secrets.open(d.previous_secret_sealed, secretContext(d.webhook_id)))
  try {
    const res = await outboundFetch(
      d.url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Gatehouse-Webhooks/1',
          'service-signature': signature(secrets, Math.floor(now / 1000), body),
          'service-webhook-id': d.event_id,
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

const FINISH_ATTEMPT = 'UPDATE webhook_attempts SET finished_at = $2, ok = ($3 = 1) WHERE id = $1'
// An attempt's outcome applies only while its job still holds the delivery (a redelivery, or the
// delivery's deletion, drops the claim).
const DELIVERED = `
  UPDATE webhook_deliveries
  SET status = 'delivered', delivered_at = $2, next_attempt_at = NULL, claimed_by = NULL,
      last_status_code = $4, last_error = NULL, last_response = $5, updated_at = $2
  WHERE id = $1 AND claimed_by = $3 AND status IN ('queued', 'retrying')`
// Written when it says something new (a failure streak ends, or a minute passed): at a high rate
// every success would otherwise rewrite the endpoint's row.
const SUCCEEDED = `
  UPDATE webhooks SET last_success_at = $2, failing_since = NULL
  WHERE id = $1 AND (failing_since IS NOT NULL OR last_success_at IS NULL OR last_success_at <= $3)`

/** The attempt's outcome on the delivery and its endpoint; a failure schedules the next retry. */
async function record(core: Core, d: Claimed, attempt: { id: string; jobId: string }, out: Outcome) {
  const { jobId } = attempt
  const webhookId = d.webhook_id
  await core.store.tx(async (tx) => {
    const now = core.clock.now()
    await tx.exec(FINISH_ATTEMPT, [attempt.id, now, out.ok ? 1 : 0])
    if (out.ok) {
      await tx.exec(DELIVERED, [d.id, now, jobId, out.statusCode, out.response])
      await tx.exec(SUCCEEDED, [webhookId, now, now - MINUTE])
      return
    }
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
      eq(webhookDeliveries.id, d.id),
      inArray(webhookDeliveries.status, ['queued', 'retrying']),
      eq(webhookDeliveries.claimedBy, jobId),
    )
    const firstFailedAt = d.first_failed_at === null ? now : Number(d.first_failed_at)
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
        { delivery_id: d.id },
        { tx, runAt: next, workspaceId: d.workspace_id },
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
