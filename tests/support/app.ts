import { afterAll } from 'bun:test'
import { createApp } from '../../src/app'
import { startIdentityPlane } from '../../src/identity'
import { testCore } from './core'

/** The composed app over a fresh store, for `app.handle` tests; the bridge closes after the file. */
export async function testApp(env: Record<string, string> = {}) {
  const core = testCore(env)
  const identity = await startIdentityPlane(core)
  afterAll(() => identity.stop())
  return { core, identity, app: createApp(core, { identity }) }
}
