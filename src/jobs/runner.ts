import type { Statement } from 'bun:sqlite'
import type { Db } from '../db/client'
import type { Clock } from '../shared/clock'
import type { Logger } from '../shared/logger'

export interface JobRow {
  id: string
  kind: string
  payload: unknown
  workspace_id: string | null
  attempts: number
  max_attempts: number
  run_at: number
}

export interface JobHandler<C = unknown, P = unknown> {
  kind: string
  run(payload: P, ctx: C, job: JobRow): Promise<void> | void
  /** Delay before attempt `attempt + 1` after `attempt` failures; default exponential from 5 s to 1 h. */
  backoffMs?(attempt: number): number
}

export const defaultBackoffMs = (attempt: number) => Math.min(3_600_000, 5_000 * 2 ** (attempt - 1))

export interface RunnerOptions {
  /** Written to `locked_by` on every claim: `<node id>:<boot id>:<worker>` (see leases.ts). */
  workerId: string
  leaseMs: number
  /** Jobs in flight at once in this runner (deliveries wait on the network, so more than one). */
  concurrency: number
}

/**
 * Claims due jobs with a lease and runs them. A job whose lease ran out (its process was killed)
 * is due again: delivery is at-least-once, so handlers must be idempotent.
 */
export class JobRunner<C> {
  private readonly claimStmt: Statement
  private readonly doneStmt: Statement
  private readonly retryStmt: Statement
  private readonly deadStmt: Statement
  private readonly heartbeatStmt: Statement
  private readonly handlers = new Map<string, JobHandler<C>>()
  private inFlight = new Set<Promise<void>>()
  private draining: Promise<void> | null = null
  private again = false

  constructor(
    db: Db,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly ctx: C,
    handlers: JobHandler<C>[],
    private readonly opts: RunnerOptions,
  ) {
    for (const h of handlers) this.handlers.set(h.kind, h)
    const sql = db.$client
    this.claimStmt = sql.prepare(`
      UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_until = $lease, locked_by = $worker, updated_at = $now
      WHERE id = (
        SELECT id FROM jobs
        WHERE (status = 'queued' AND run_at <= $now) OR (status = 'running' AND lease_until < $now)
        ORDER BY run_at, id LIMIT 1
      )
      RETURNING id, kind, payload, workspace_id, attempts, max_attempts, run_at`)
    this.doneStmt = sql.prepare(
      `UPDATE jobs SET status = 'done', lease_until = NULL, last_error = NULL, updated_at = $now WHERE id = $id AND locked_by = $worker`,
    )
    this.retryStmt = sql.prepare(
      `UPDATE jobs SET status = 'queued', lease_until = NULL, locked_by = NULL, run_at = $runAt, last_error = $error, updated_at = $now WHERE id = $id AND locked_by = $worker`,
    )
    this.deadStmt = sql.prepare(
      `UPDATE jobs SET status = 'dead', lease_until = NULL, last_error = $error, updated_at = $now WHERE id = $id AND locked_by = $worker`,
    )
    this.heartbeatStmt = sql.prepare(
      `UPDATE jobs SET lease_until = $lease WHERE id = $id AND locked_by = $worker AND status = 'running'`,
    )
  }

  /** Runs every job due now, then resolves. Concurrent calls coalesce into one more pass. */
  drain(): Promise<void> {
    if (this.draining) {
      this.again = true
      return this.draining
    }
    this.draining = (async () => {
      do {
        this.again = false
        await this.pass()
      } while (this.again)
    })().finally(() => {
      this.draining = null
    })
    return this.draining
  }

  private async pass() {
    for (;;) {
      while (this.inFlight.size < this.opts.concurrency) {
        const job = this.claim()
        if (!job) break
        const p: Promise<void> = this.execute(job).finally(() => this.inFlight.delete(p))
        this.inFlight.add(p)
      }
      if (this.inFlight.size === 0) return
      await Promise.race(this.inFlight)
    }
  }

  private claim(): JobRow | null {
    const now = this.clock.now()
    const row = this.claimStmt.get({ now, lease: now + this.opts.leaseMs, worker: this.opts.workerId }) as
      | (Omit<JobRow, 'payload'> & { payload: string })
      | null
    return row ? { ...row, payload: JSON.parse(row.payload) } : null
  }

  private async execute(job: JobRow) {
    const key = { id: job.id, worker: this.opts.workerId }
    const handler = this.handlers.get(job.kind)
    if (!handler) {
      this.log.error('job kind unknown', { job_id: job.id, kind: job.kind })
      this.deadStmt.run({ ...key, now: this.clock.now(), error: `unknown job kind ${job.kind}` })
      return
    }
    const beat = setInterval(
      () => this.heartbeatStmt.run({ ...key, lease: this.clock.now() + this.opts.leaseMs }),
      Math.max(250, this.opts.leaseMs / 3),
    )
    try {
      await handler.run(job.payload, this.ctx, job)
      this.doneStmt.run({ ...key, now: this.clock.now() })
    } catch (e) {
      const error = e instanceof Error ? e.message : String(e)
      const now = this.clock.now()
      if (job.attempts >= job.max_attempts) {
        this.log.error('job failed permanently', {
          job_id: job.id,
          kind: job.kind,
          attempts: job.attempts,
          error,
        })
        this.deadStmt.run({ ...key, now, error })
      } else {
        const delay = (handler.backoffMs ?? defaultBackoffMs)(job.attempts)
        this.log.warn('job failed, will retry', {
          job_id: job.id,
          kind: job.kind,
          attempts: job.attempts,
          error,
        })
        this.retryStmt.run({ ...key, now, runAt: now + delay, error })
      }
    } finally {
      clearInterval(beat)
    }
  }
}
