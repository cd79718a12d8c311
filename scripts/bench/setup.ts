// Fixtures for the identity-plane scenarios: a free loopback port, and an active workspace with its
// instance keys and a confidential (`web`) app, written straight into the store of a running server
// (the same shape provisioning and tests/support/instances.ts leave behind).
import { createServer } from 'node:net'
import { loadConfig } from '../../src/config'
import { createCore } from '../../src/core'
import { issuerFor } from '../../src/identity/instances'
import { ensureInstanceKeys } from '../../src/identity/keys'
import { randomToken, sha256Hex } from '../../src/shared/crypto'
import { newId, newWorkspaceId } from '../../src/shared/ids'
import { createLogger } from '../../src/shared/logger'

/** A TCP port that was free a moment ago on 127.0.0.1 (listen on 0, read it, close). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => (port ? resolve(port) : reject(new Error('no port assigned'))))
    })
  })
}

export interface BenchWorkspace {
  workspaceId: string
  issuer: string
  clientId: string
  clientSecret: string
}

/**
 * Creates an active workspace, its instance keys and a `web` app in the database of the server
 * started with `env` (which must carry the same DATA_DIR and SECRET_KEY: the keys are sealed with it).
 */
export async function seedWorkspace(env: Record<string, string | undefined>): Promise<BenchWorkspace> {
  const config = loadConfig(env)
  const core = createCore(config, { log: createLogger('error') })
  try {
    const workspaceId = newWorkspaceId()
    const now = core.clock.now()
    const sql = core.db.$client
    // Plain SQL naming only the columns set here, so columns added later (with defaults) need no change.
    sql
      .prepare(
        `INSERT INTO workspaces (id, name, owner_id, state, created_at, updated_at)
         VALUES ($id, 'Bench', 'usr_bench', 'active', $now, $now)`,
      )
      .run({ id: workspaceId, now })
    await ensureInstanceKeys(core, workspaceId)
    const clientId = randomToken(16)
    const clientSecret = randomToken(32)
    sql
      .prepare(
        `INSERT INTO apps (id, instance_id, name, client_id, client_secret_hash, app_type, redirect_uris,
           post_logout_redirect_uris, dev_mode, extra_grants, created_at)
         VALUES ($id, $instance, 'bench web app', $clientId, $hash, 'web', '["https://rp.example/cb"]', '[]', 0, '[]', $now)`,
      )
      .run({ id: newId('app'), instance: workspaceId, clientId, hash: sha256Hex(clientSecret), now })
    return { workspaceId, issuer: issuerFor(config, workspaceId), clientId, clientSecret }
  } finally {
    core.db.$client.close()
  }
}

/** `Authorization: Basic …` for client_secret_basic (RFC 6749 §2.3.1: form-encode, then base64). */
export const basicAuth = (clientId: string, clientSecret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`
