import { Database } from 'bun:sqlite'
import { chmodSync } from 'node:fs'
import { join } from 'node:path'
import type { Logger } from '../shared/logger'
import { type HeldLock, PostgresStore } from './postgres'
import type { Store } from './store'

/** Thrown when another process already serves this DATA_DIR. */
export class ServeLockTaken extends Error {}

/**
 * One serving process per SQLite store: an exclusive SQLite lock on `DATA_DIR/serve.lock`, held for
 * the life of the process. The kernel drops it when the process dies (even by `kill -9`), so a
 * restart takes it at once — and only then may the new boot take back the jobs its predecessor was
 * running. A second `serve` on the same DATA_DIR (another port, a rolling deploy that starts the new
 * container first) is refused instead of running those jobs a second time.
 */
export function acquireServeLock(dataDir: string): { release(): void } {
  const path = join(dataDir, 'serve.lock')
  const lock = new Database(path, { create: true })
  chmodSync(path, 0o600)
  try {
    lock.exec('PRAGMA busy_timeout = 0')
    // EXCLUSIVE locking mode keeps the lock of the first write until the connection closes.
    lock.exec('PRAGMA locking_mode = EXCLUSIVE')
    lock.exec('BEGIN EXCLUSIVE')
    lock.exec('CREATE TABLE IF NOT EXISTS serve_lock (held INTEGER)')
    lock.exec('COMMIT')
  } catch (e) {
    lock.close()
    if ((e as { code?: string }).code?.startsWith('SQLITE_BUSY'))
      throw new ServeLockTaken(`another gatehouse process is already serving ${dataDir}`)
    throw e
  }
  return { release: () => lock.close() }
}

/** `lost`: another process took this node id's lock after this one's connection to it dropped. */
type NodeLockState = 'held' | 'lost'

export interface NodeLock {
  /** What /healthz says of it (`node_lock`). */
  readonly state: NodeLockState
  /**
   * Whether the lock is held, asked of the database now (PostgreSQL). What may run only while the
   * lock is held (the start-up reclaim of an earlier boot's jobs) asks right before it runs.
   */
  confirm(): Promise<boolean>
  release(): Promise<void> | void
}

/** How often a node on PostgreSQL checks its lock: one query on the lock's connection. */
export const NODE_LOCK_CHECK_MS = 3000

/**
 * How long a node starting on PostgreSQL waits for its node id's lock: a predecessor with the same
 * id that is stopping (a restart) may still hold it while its session ends.
 */
const NODE_LOCK_WAIT_MS = 3000
const NODE_LOCK_RETRY_MS = 100

/**
 * What `serve` holds while it runs, so that the start-up reclaim of its earlier boot's jobs can
 * never take a live process's. SQLite: the DATA_DIR lock (one process per store), which the kernel
 * holds for the process's life. PostgreSQL: an advisory lock on the node id (NODE_ID, or
 * DATA_DIR/node.id): several nodes share the store, but two live processes never share a node id.
 * It lives on one connection, and goes if that connection drops: every `checkEveryMs` the node asks,
 * and takes it again on a new connection. When another process took it meanwhile, the node is
 * `lost` (one warning, and /healthz says `degraded`) until it gets it back.
 */
export async function acquireNodeLock(
  store: Store,
  dataDir: string,
  nodeId: string,
  opts: { log: Logger; checkEveryMs?: number; waitMs?: number },
): Promise<NodeLock> {
  if (!(store instanceof PostgresStore)) {
    const lock = acquireServeLock(dataDir)
    return { state: 'held', confirm: async () => true, release: () => lock.release() }
  }
  const key = `gatehouse:node:${nodeId}`
  const deadline = Date.now() + (opts.waitMs ?? NODE_LOCK_WAIT_MS)
  let lock = await store.holdLock(key)
  while (!lock && Date.now() < deadline) {
    await Bun.sleep(NODE_LOCK_RETRY_MS)
    lock = await store.holdLock(key)
  }
  if (!lock) {
    throw new ServeLockTaken(
      `node id "${nodeId}" is in use by a running node on this database: give each node its own NODE_ID`,
    )
  }
  return watchNodeLock(lock, nodeId, opts.log, opts.checkEveryMs ?? NODE_LOCK_CHECK_MS)
}

function watchNodeLock(lock: HeldLock, nodeId: string, log: Logger, checkEveryMs: number): NodeLock {
  let state: NodeLockState = 'held'
  let checking: Promise<boolean> | null = null
  // One check at a time: a confirm() during a timer's check shares its answer.
  const check = (): Promise<boolean> => {
    checking ??= (async () => {
      try {
        const found = await lock.check()
        if (found === 'taken' && state === 'held') {
          log.warn(
            'node lock lost: another process holds this node id (give each node its own NODE_ID); this node takes back no jobs and /healthz says degraded until it holds the lock again',
            { node_id: nodeId },
          )
        } else if (found === 'retaken') {
          log.info('node lock taken back on a new connection', { node_id: nodeId })
        }
        state = found === 'taken' ? 'lost' : 'held'
      } catch {
        // The database does not answer (/healthz says so): the next check asks again.
      }
      return state === 'held'
    })().finally(() => {
      checking = null
    })
    return checking
  }
  const timer = setInterval(check, checkEveryMs)
  timer.unref?.()
  return {
    get state() {
      return state
    },
    confirm: check,
    async release() {
      clearInterval(timer)
      await checking
      await lock.release()
    },
  }
}
