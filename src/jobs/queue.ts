import type { Db } from '../db/client'
import { jobs } from '../db/schema'
import type { Clock } from '../shared/clock'
import { newId } from '../shared/ids'

export interface EnqueueOptions {
  /** When the job becomes due (epoch ms); default now. */
  runAt?: number
  workspaceId?: string | null
  maxAttempts?: number
  /** Enqueue inside the caller's transaction (the outbox pattern). */
  tx?: Pick<Db, 'insert'>
}

/**
 * `enqueue(kind, payload)` writes a durable job row. The main thread passes `wake` so its
 * workers start at once instead of waiting for the next tick.
 */
export class JobQueue {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly wake: () => void = () => {},
  ) {}

  enqueue(kind: string, payload: unknown, opts: EnqueueOptions = {}): string {
    const now = this.clock.now()
    const id = newId('job', now)
    ;(opts.tx ?? this.db)
      .insert(jobs)
      .values({
        id,
        kind,
        payload: JSON.stringify(payload ?? null),
        workspaceId: opts.workspaceId ?? null,
        runAt: opts.runAt ?? now,
        maxAttempts: opts.maxAttempts ?? 10,
        createdAt: now,
        updatedAt: now,
      })
      .run()
    // A microtask runs after the caller's synchronous transaction has committed.
    queueMicrotask(this.wake)
    return id
  }
}
