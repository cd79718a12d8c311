import { and, eq, ne } from 'drizzle-orm'
import { deleteInBatches } from '../db/batch-delete'
import type { Conn } from '../db/store'
import type { Clock } from '../shared/clock'
import { newId } from '../shared/ids'
import { jobs } from './schema'

export interface EnqueueOptions {
  /** When the job becomes due (epoch ms); default now. */
  runAt?: number
  workspaceId?: string | null
  maxAttempts?: number
  /** Enqueue inside the caller's transaction (the outbox pattern). */
  tx?: Conn
}

/**
 * `enqueue(kind, payload)` writes a durable job row. The main thread passes `wake` so its
 * workers start at once instead of waiting for the next tick.
 */
export class JobQueue {
  constructor(
    private readonly store: Conn,
    private readonly clock: Clock,
    private readonly wake: () => void = () => {},
  ) {}

  async enqueue(kind: string, payload: unknown, opts: EnqueueOptions = {}): Promise<string> {
    const row = this.row(kind, payload, opts)
    const conn = opts.tx ?? this.store
    await conn.db.insert(jobs).values(row)
    conn.afterCommit(this.wake)
    return row.id
  }

  /** One job of `kind` per payload, in statements of 500 rows; their ids in order. */
  async enqueueMany(kind: string, payloads: unknown[], opts: EnqueueOptions = {}): Promise<string[]> {
    if (!payloads.length) return []
    const rows = payloads.map((p) => this.row(kind, p, opts))
    const conn = opts.tx ?? this.store
    for (let i = 0; i < rows.length; i += 500) await conn.db.insert(jobs).values(rows.slice(i, i + 500))
    conn.afterCommit(this.wake)
    return rows.map((r) => r.id)
  }

  /**
   * Enqueues unless a job with `dedupeKey` exists already, whichever node wrote it: periodic work
   * gives each schedule slot one key, so a cluster runs it once. True when this call added it.
   */
  async enqueueOnce(
    kind: string,
    payload: unknown,
    dedupeKey: string,
    opts: EnqueueOptions = {},
  ): Promise<boolean> {
    const conn = opts.tx ?? this.store
    const added = await conn.db
      .insert(jobs)
      .values({ ...this.row(kind, payload, opts), dedupeKey })
      .onConflictDoNothing({ target: jobs.dedupeKey })
      .returning({ id: jobs.id })
    if (added.length > 0) conn.afterCommit(this.wake)
    return added.length > 0
  }

  /** Drops a job's payload (a finished job that carried a secret keeps no copy of it). */
  async clearPayload(id: string): Promise<void> {
    await this.store.db.update(jobs).set({ payload: 'null' }).where(eq(jobs.id, id))
  }

  private row(kind: string, payload: unknown, opts: EnqueueOptions) {
    const now = this.clock.now()
    return {
      id: newId('job', now),
      kind,
      payload: JSON.stringify(payload ?? null),
      workspaceId: opts.workspaceId ?? null,
      runAt: opts.runAt ?? now,
      maxAttempts: opts.maxAttempts ?? 10,
      createdAt: now,
      updatedAt: now,
    }
  }
}

/**
 * Workspace teardown's share of the queue: the workspace's jobs go with it, those still waiting (a
 * mail to one of its users, a retry) and those finished (whose rows name it). Running ones finish
 * as they are; the teardown job itself is enqueued without a workspace, so none of its rows remain.
 */
export async function deleteWorkspaceJobs({ db }: { db: Conn['db'] }, workspaceId: string): Promise<void> {
  await db.delete(jobs).where(and(eq(jobs.workspaceId, workspaceId), ne(jobs.status, 'running')))
}

/**
 * Finished periodic jobs are kept a week (what ran lately stays visible; a slot's key is what
 * keeps a second node from running it again), dead jobs a week (their error is read to diagnose),
 * every other finished job a day (a mail, a delivery, a provisioning: their outcome lives in their
 * own rows).
 */
const KEEP_FINISHED_PERIODIC_MS = 7 * 24 * 3600_000
const KEEP_DEAD_MS = 7 * 24 * 3600_000
const KEEP_FINISHED_MS = 24 * 3600_000

/** Drops finished jobs past their keeping time: without it the queue's table only grows. */
export async function purgeFinishedJobs({ store, clock }: { store: Conn; clock: Clock }) {
  const now = clock.now()
  const periodic = "dedupe_key IS NOT NULL AND status = 'done' AND updated_at <= $1"
  const others = "dedupe_key IS NULL AND status = 'done' AND updated_at <= $1"
  return {
    jobs:
      (await deleteInBatches(store, 'jobs', periodic, [now - KEEP_FINISHED_PERIODIC_MS])) +
      (await deleteInBatches(store, 'jobs', others, [now - KEEP_FINISHED_MS])) +
      (await deleteInBatches(store, 'jobs', "status = 'dead' AND updated_at <= $1", [now - KEEP_DEAD_MS])),
  }
}
