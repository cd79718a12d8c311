import { type Audit, createAudit } from './audit/record'
import type { Config } from './config'
import { openStore } from './db/client'
import type { Db, Store } from './db/store'
import { createEmit, type Emit } from './events/emit'
import { createLimiter, type Limiter } from './limits/limiter'
import { JobQueue } from './queue/job-queue'
import { type Clock, systemClock } from './shared/clock'
import { SecretBox } from './shared/crypto'
import { InstanceChanges } from './shared/instance-changes'
import { createLogger, type Logger } from './shared/logger'
import { NodeWarnings } from './shared/node-warnings'

/**
 * What every feature service may depend on, built once per thread (the main thread and each job
 * worker build their own: connections do not cross threads). Passed explicitly, never global.
 */
export interface Core {
  config: Config
  /** SQLite or PostgreSQL: transactions (`store.tx`), raw hot-path queries, cluster messages. */
  store: Store
  /** The store's drizzle handle (`store.db`): every query is awaited. */
  db: Db
  clock: Clock
  log: Logger
  secrets: SecretBox
  jobs: JobQueue
  emit: Emit
  /** Records a mutating action in the workspace's audit log, in the change's transaction. */
  audit: Audit
  /** Tells in-memory views of an identity instance, on every node, that its rows changed. */
  instances: InstanceChanges
  /** The one rate limiter: every rate the platform counts, by named bucket. */
  limiter: Limiter
  /** What this node noticed of its set-up for its operator: logged once, listed in /healthz. */
  warnings: NodeWarnings
}

export interface CoreOptions {
  clock?: Clock
  log?: Logger
  store?: Store
  /** Connections to PostgreSQL for this thread (job workers open fewer than the main thread). */
  poolSize?: number
  /** Called after an enqueue commits; the main thread wakes its workers with it. */
  wakeJobs?: () => void
}

export function createCore(config: Config, opts: CoreOptions = {}): Core {
  const clock = opts.clock ?? systemClock
  const store = opts.store ?? openStore(config, { poolSize: opts.poolSize })
  const jobs = new JobQueue(store, clock, opts.wakeJobs)
  const log = opts.log ?? createLogger(config.logLevel)
  return {
    config,
    store,
    db: store.db,
    clock,
    log,
    secrets: new SecretBox(config.secretKey),
    jobs,
    emit: createEmit(store, clock, jobs),
    audit: createAudit(clock),
    instances: new InstanceChanges(store, config.dataDir),
    limiter: createLimiter(store, clock, config),
    warnings: new NodeWarnings(log),
  }
}
