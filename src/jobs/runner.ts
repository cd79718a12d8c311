import { type Conn, loggable } from '../db/store'
import type { Clock } from '../shared/clock'
import type { Logger } from '../shared/logger'

interface JobRow {
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

/** Tries to record a job's outcome before leaving it to its lease. */
const OUTCOME_WRITES = 5

const defaultBackoffMs = (attempt: number) => Math.min(3_600_000, 5_000 * 2 ** (attempt - 1))

interface RunnerOptions {
  /** Written to `locked_by` on every claim: `<node id>:<boot id>:<worker>` (see leases.ts). */
  workerId: string
  leaseMs: number
  /** Jobs in flight at once in this runner (deliveries wait on the network, so more than one). */
  concurrency: number
  /** Told of every job it runs (the job thread's idle collection counts its work by them). */
  onJob?: () => void
}

/**
 * Claims due jobs with a lease and runs them. A job whose lease ran out (its process was killed)
 * is due again: delivery is at-least-once, so handlers must be idempotent.
 */
export class JobRunner<C> {
  private readonly claimSql: string
  private readonly handlers = new Map<string, JobHandler<C>>()
  private inFlight = new Set<Promise<void>>()
  private draining: Promise<void> | null = null
  private again = false
  private nudge: (() => void) | null = null

  constructor(
    private readonly store: Conn,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly ctx: C,
    handlers: JobHandler<C>[],
    private readonly opts: RunnerOptions,
  ) {
    for (const h of handlers) this.handlers.set(h.kind, h)
    // One statement claims one due row: a job whose lease ran out (its process died) first, else the
    // earliest queued one. Each subselect walks an index to its first row; an OR of both would read
    // and sort the whole due set on every claim. PostgreSQL: the row is locked by the claim and
    // skipped by every other claimer meanwhile (SKIP LOCKED), so N nodes claim side by side and each
    // row once. SQLite: one writer at a time, so the subselects and the update cannot interleave.
    const lock = store.dialect === 'postgres' ? 'FOR UPDATE SKIP LOCKED' : ''
    this.claimSql = `
      UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_until = $2, locked_by = $3, updated_at = $1
      WHERE id = COALESCE(
        (SELECT id FROM jobs WHERE status = 'running' AND lease_until < $1 ORDER BY lease_until LIMIT 1 ${lock}),
        (SELECT id FROM jobs WHERE status = 'queued' AND run_at <= $1 ORDER BY run_at, id LIMIT 1 ${lock})
      )
      RETURNING id, kind, payload, workspace_id, attempts, max_attempts, run_at`
  }

  private finish(sql: string, params: unknown[]): Promise<number> {
    return this.store.exec(sql, params)
  }

  private done(id: string) {
    return this.finish(
      `UPDATE jobs SET status = 'done', lease_until = NULL, last_error = NULL, updated_at = $1 WHERE id = $2 AND locked_by = $3`,
      [this.clock.now(), id, this.opts.workerId],
    )
  }

  private retry(id: string, runAt: number, error: string) {
    return this.finish(
      `UPDATE jobs SET status = 'queued', lease_until = NULL, locked_by = NULL, run_at = $1, last_error = $2, updated_at = $3 WHERE id = $4 AND locked_by = $5`,
      [runAt, error, this.clock.now(), id, this.opts.workerId],
    )
  }

  private dead(id: string, error: string) {
    return this.finish(
      `UPDATE jobs SET status = 'dead', lease_until = NULL, last_error = $1, updated_at = $2 WHERE id = $3 AND locked_by = $4`,
      [error, this.clock.now(), id, this.opts.workerId],
    )
  }

  private heartbeat(id: string) {
    return this.finish(
      `UPDATE jobs SET lease_until = $1 WHERE id = $2 AND locked_by = $3 AND status = 'running'`,
      [this.clock.now() + this.opts.leaseMs, id, this.opts.workerId],
    )
  }

  /** Runs every job due now, then resolves. Concurrent calls coalesce into one more pass. */
  drain(): Promise<void> {
    if (this.draining) {
      this.again = true
      // A pass waiting on its running jobs claims again now: free slots must not sit idle behind
      // one slow job.
      this.nudge?.()
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
        const job = await this.claim()
        if (!job) break
        const p: Promise<void> = this.execute(job).finally(() => this.inFlight.delete(p))
        this.inFlight.add(p)
      }
      if (this.inFlight.size === 0) return
      await Promise.race([...this.inFlight, new Promise<void>((resolve) => (this.nudge = resolve))])
      this.nudge = null
    }
  }

  private async claim(): Promise<JobRow | null> {
    const now = this.clock.now()
    const [row] = await this.store.query<Omit<JobRow, 'payload'> & { payload: string }>(this.claimSql, [
      now,
      now + this.opts.leaseMs,
      this.opts.workerId,
    ])
    return row ? { ...row, payload: JSON.parse(row.payload) } : null
  }

  private async execute(job: JobRow) {
    this.opts.onJob?.()
    const handler = this.handlers.get(job.kind)
    if (!handler) {
      this.log.error('job kind unknown', { job_id: job.id, kind: job.kind })
      await this.dead(job.id, `unknown job kind ${job.kind}`)
      return
    }
    if (job.attempts > job.max_attempts) {
      // Claimed again after its lease ran out, attempt after attempt: a job that kills its process
      // would otherwise go round the nodes for ever.
      this.log.error('job gave up: its runs kept stopping mid-way', { job_id: job.id, kind: job.kind })
      await this.dead(job.id, 'interrupted more often than max_attempts allows')
      return
    }
    const beat = setInterval(
      () =>
        this.heartbeat(job.id).catch((e) =>
          this.log.warn('job lease not extended', { job_id: job.id, error: String(e) }),
        ),
      Math.max(250, this.opts.leaseMs / 3),
    )
    try {
      let failure: string | null = null
      try {
        await handler.run(job.payload, this.ctx, job)
      } catch (e) {
        // Kept in jobs.last_error and the log: never a failed statement's parameters.
        failure = loggable(e).error
      }
      // A busy store (SQLite's write lock under contention) must not turn a finished job into one
      // that runs again when its lease runs out: the outcome is written again a few times.
      for (let attempt = 1; ; attempt++) {
        try {
          await this.record(job, handler, failure)
          break
        } catch (e) {
          if (attempt === OUTCOME_WRITES) throw e
          await new Promise((resolve) => setTimeout(resolve, 100 * attempt))
        }
      }
    } catch (e) {
      // The store is out of reach: the row stays running and its lease runs out, so the job is
      // claimed again (handlers are idempotent).
      this.log.error('job outcome not recorded', { job_id: job.id, kind: job.kind, error: loggable(e).error })
    } finally {
      clearInterval(beat)
    }
  }

  private async record(job: JobRow, handler: JobHandler<C>, error: string | null) {
    if (error === null) {
      await this.done(job.id)
    } else if (job.attempts >= job.max_attempts) {
      this.log.error('job failed permanently', {
        job_id: job.id,
        kind: job.kind,
        attempts: job.attempts,
        error,
      })
      await this.dead(job.id, error)
    } else {
      const delay = (handler.backoffMs ?? defaultBackoffMs)(job.attempts)
      this.log.warn('job failed, will retry', {
        job_id: job.id,
        kind: job.kind,
        attempts: job.attempts,
        error,
      })
      await this.retry(job.id, this.clock.now() + delay, error)
    }
  }
}
