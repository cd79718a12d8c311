import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { type Config, ConfigError, StartupError } from '../config'
import { migrate, openStore } from './client'
import { isPostgresUrl } from './columns'
import { CopyRefused, copyStore } from './copy'
import { acquireServeLock, ServeLockTaken } from './serve-lock'
import { SqliteStore } from './sqlite'

/** `gatehouse store copy --to postgres://…`: prints progress and the per-table counts; 0 when they match. */
export async function copyStoreCommand(
  config: Pick<Config, 'dataDir' | 'databasePath'>,
  to: string,
): Promise<number> {
  if (!isPostgresUrl(to)) throw new ConfigError('--to', 'expected a postgres:// or postgresql:// URL')
  let lock: { release(): void }
  try {
    // The store must be stopped: a running server would keep writing what is being copied.
    lock = acquireServeLock(config.dataDir)
  } catch (e) {
    if (e instanceof ServeLockTaken) throw new StartupError(`${e.message}: stop it before copying its store`)
    throw e
  }
  const store = openStore({ ...config, databaseUrl: null, databasePoolSize: 1 })
  try {
    if (!(store instanceof SqliteStore)) throw new StartupError('store copy reads a SQLite store')
    await migrate(store)
    console.log(`copying ${config.databasePath} into PostgreSQL`)
    const counts = await copyStore(store.raw, to, (line) => console.log(line))
    const width = Math.max(5, ...counts.map((c) => c.table.length))
    console.log(`${'table'.padEnd(width)}  ${'sqlite'.padStart(8)}  ${'postgres'.padStart(8)}`)
    for (const c of counts) {
      const mark = c.sqlite === c.postgres ? '' : '  MISMATCH'
      console.log(
        `${c.table.padEnd(width)}  ${String(c.sqlite).padStart(8)}  ${String(c.postgres).padStart(8)}${mark}`,
      )
    }
    if (counts.some((c) => c.sqlite !== c.postgres)) {
      console.error('gatehouse: the row counts differ: the copy is not complete')
      return 1
    }
    const keyFile = join(config.dataDir, 'master.key')
    console.log(
      'copy complete. Start every node with DATABASE_URL and SECRET_KEY set to the master key this store ' +
        'was sealed with: the SECRET_KEY it ran with, or else the hex in ' +
        (existsSync(keyFile) ? keyFile : 'DATA_DIR/master.key') +
        '. With another key, sealed secrets (signing keys, cookie keys) will not open.',
    )
    return 0
  } catch (e) {
    if (e instanceof CopyRefused) throw new StartupError(e.message)
    throw e
  } finally {
    await store.close()
    lock.release()
  }
}
