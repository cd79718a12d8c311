import { Database } from 'bun:sqlite'
import { chmodSync } from 'node:fs'
import { join } from 'node:path'
import { PostgresStore } from './postgres'
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

/**
 * What `serve` holds while it runs, so that the start-up reclaim of its earlier boot's jobs can
 * never take a live process's. SQLite: the DATA_DIR lock (one process per store). PostgreSQL: an
 * advisory lock on the node id (NODE_ID, or DATA_DIR/node.id): several nodes share the store, but
 * two live processes never share a node id.
 */
export async function acquireNodeLock(
  store: Store,
  dataDir: string,
  nodeId: string,
): Promise<{ release(): Promise<void> | void }> {
  if (!(store instanceof PostgresStore)) return acquireServeLock(dataDir)
  const lock = await store.holdLock(`gatehouse:node:${nodeId}`)
  if (!lock) {
    throw new ServeLockTaken(
      `node id "${nodeId}" is in use by a running node on this database: give each node its own NODE_ID`,
    )
  }
  return lock
}
