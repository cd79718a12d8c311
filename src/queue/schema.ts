import { epochMs, index, integer, table, text, uniqueIndex } from '../db/columns'

export type JobStatus = 'queued' | 'running' | 'done' | 'dead'

/** The durable job queue: claimed with a lease; an expired lease (killed process) is claimed again. */
export const jobs = table(
  'jobs',
  {
    id: text('id').primaryKey(),
    kind: text('kind').notNull(),
    /** JSON text; `null` payloads are stored as the text "null". */
    payload: text('payload').notNull(),
    workspaceId: text('workspace_id'),
    status: text('status').$type<JobStatus>().notNull().default('queued'),
    runAt: epochMs('run_at').notNull(),
    attempts: integer('attempts').notNull().default(0),
    maxAttempts: integer('max_attempts').notNull().default(10),
    leaseUntil: epochMs('lease_until'),
    lockedBy: text('locked_by'),
    lastError: text('last_error'),
    /**
     * Set for periodic work: `<kind>@<slot start>`. Unique, so every node may enqueue the slot and
     * exactly one row results (src/jobs/schedule.ts).
     */
    dedupeKey: text('dedupe_key'),
    createdAt: epochMs('created_at').notNull(),
    updatedAt: epochMs('updated_at').notNull(),
  },
  (t) => [
    // The claim's two walks: (queued, run_at, id) in order, and (running, lease_until).
    index('jobs_due_idx').on(t.status, t.runAt, t.id),
    index('jobs_lease_idx').on(t.status, t.leaseUntil),
    index('jobs_workspace_idx').on(t.workspaceId),
    uniqueIndex('jobs_dedupe_key_idx').on(t.dedupeKey),
  ],
)
