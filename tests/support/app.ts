import { createApp } from '../../src/app'
import { startIdentityPlane } from '../../src/identity'
import { identityExtensions } from '../../src/server'
import { testCore } from './core'

/** The composed app over a fresh store, for `app.handle` tests. */
export async function testApp(env: Record<string, string> = {}) {
  const core = await testCore(env)
  const identity = await startIdentityPlane(core, identityExtensions(core))
  return { core, identity, app: createApp(core, { identity }) }
}
