import type { Actor } from '../../src/access/model'
import { type Config, loadConfig } from '../../src/config'
import { type Core, createCore } from '../../src/core'
import { migrate } from '../../src/db/client'
import { ManualClock } from '../../src/shared/clock'
import { createLogger } from '../../src/shared/logger'
import { TEST_RATE_LIMITS } from './limits'
import { storeEnv } from './postgres'
import { tempDir } from './temp'

export { tempDir }

/** Who a test's direct service call is recorded as in the audit log (a route hands the guard's). */
export const TEST_ACTOR: Actor = { id: 'user:test', ip: null, userAgent: null }

export interface TestCore extends Core {
  clock: ManualClock
  /** Every log line written, parsed: tests assert on what was (and was not) logged. */
  logLines: Record<string, unknown>[]
  config: Config
}

/** A migrated store in a fresh temp dir, a manual clock and a captured log. */
export async function testCore(env: Record<string, string> = {}): Promise<TestCore> {
  const dataDir = env.DATA_DIR ?? tempDir()
  const config = loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'debug',
    ...TEST_RATE_LIMITS,
    ...(await storeEnv(dataDir)),
    ...env,
  })
  const clock = new ManualClock()
  const logLines: Record<string, unknown>[] = []
  const log = createLogger('debug', (line) => logLines.push(JSON.parse(line)))
  const core = createCore(config, { clock, log })
  await migrate(core.store)
  return { ...core, clock, logLines, config }
}
