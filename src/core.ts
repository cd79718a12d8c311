import type { Config } from './config'
import { type Db, openDb } from './db/client'
import { createEmit, type Emit } from './events/emit'
import { JobQueue } from './queue/queue'
import { type Clock, systemClock } from './shared/clock'
import { SecretBox } from './shared/crypto'
import { InstanceChanges } from './shared/instance-changes'
import { createLogger, type Logger } from './shared/logger'

/**
 * What every feature service may depend on, built once per thread (the main thread and each job
 * worker build their own: SQLite connections do not cross threads). Passed explicitly, never global.
 */
export interface Core {
  config: Config
  db: Db
  clock: Clock
  log: Logger
  secrets: SecretBox
  jobs: JobQueue
  emit: Emit
  /** Tells in-memory views of an identity instance that its rows changed. */
  instances: InstanceChanges
}

export interface CoreOptions {
  clock?: Clock
  log?: Logger
  db?: Db
  /** Called after an enqueue commits; the main thread wakes its workers with it. */
  wakeJobs?: () => void
}

export function createCore(config: Config, opts: CoreOptions = {}): Core {
  const clock = opts.clock ?? systemClock
  const db = opts.db ?? openDb(config.databasePath)
  return {
    config,
    db,
    clock,
    log: opts.log ?? createLogger(config.logLevel),
    secrets: new SecretBox(config.secretKey),
    jobs: new JobQueue(db, clock, opts.wakeJobs),
    emit: createEmit(db, clock),
    instances: new InstanceChanges(),
  }
}
