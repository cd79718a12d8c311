import type { Statement } from 'bun:sqlite'
import type { Core } from '../core'
import { createClientFinder } from './clients'
import type { ClientSource } from './deps'
import { accountOf, payloadCodec } from './payload-keys'

/** oidc-provider's adapter contract (one class per instance, one object per model). */
export interface OidcAdapter {
  upsert(id: string, payload: Record<string, unknown>, expiresIn?: number): Promise<void>
  find(id: string): Promise<Record<string, unknown> | undefined>
  findByUserCode(userCode: string): Promise<Record<string, unknown> | undefined>
  findByUid(uid: string): Promise<Record<string, unknown> | undefined>
  consume(id: string): Promise<void>
  destroy(id: string): Promise<void>
  revokeByGrantId(grantId: string): Promise<void>
}

/**
 * The SQLite adapter of one instance: clients come from `clients.ts` (no provider rebuild for a
 * new app); every other model lives in `oidc_payloads`, keyed and scrubbed by `payloadCodec` so
 * the table holds no working credential.
 */
export function createAdapterClass(core: Core, instanceId: string, source: ClientSource) {
  const sql = core.db.$client
  const codec = payloadCodec(core, instanceId)
  const findClient = createClientFinder(core, instanceId, source)
  const stmts = {
    // A save without the user code (a device code found by id) keeps the one stored.
    upsert: sql.prepare(`
      INSERT INTO oidc_payloads (instance_id, model, id, payload, grant_id, user_code, uid, account_id, expires_at, consumed_at)
      VALUES ($instance, $model, $id, $payload, $grantId, $userCode, $uid, $accountId, $expiresAt, NULL)
      ON CONFLICT (instance_id, model, id) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id,
        user_code = COALESCE(excluded.user_code, oidc_payloads.user_code), uid = excluded.uid,
        account_id = COALESCE(excluded.account_id, oidc_payloads.account_id), expires_at = excluded.expires_at`),
    find: sql.prepare(
      'SELECT payload, expires_at, consumed_at FROM oidc_payloads WHERE instance_id = $instance AND model = $model AND id = $id',
    ),
    byUserCode: sql.prepare(
      'SELECT payload, expires_at, consumed_at FROM oidc_payloads WHERE instance_id = $instance AND model = $model AND user_code = $value',
    ),
    byUid: sql.prepare(
      'SELECT payload, expires_at, consumed_at FROM oidc_payloads WHERE instance_id = $instance AND model = $model AND uid = $value',
    ),
    consume: sql.prepare(
      'UPDATE oidc_payloads SET consumed_at = $now WHERE instance_id = $instance AND model = $model AND id = $id',
    ),
    destroy: sql.prepare(
      'DELETE FROM oidc_payloads WHERE instance_id = $instance AND model = $model AND id = $id',
    ),
    revoke: sql.prepare('DELETE FROM oidc_payloads WHERE instance_id = $instance AND grant_id = $grantId'),
  } satisfies Record<string, Statement>

  const decode = (model: string, row: unknown, by: { id?: string; userCode?: string }) => {
    const r = row as { payload: string; expires_at: number | null; consumed_at: number | null } | null
    if (!r || (r.expires_at !== null && r.expires_at <= core.clock.now())) return undefined
    const payload = codec.restore(model, r.payload, by)
    if (r.consumed_at !== null) payload.consumed = Math.floor(r.consumed_at / 1000)
    return payload
  }

  return class SqliteAdapter implements OidcAdapter {
    constructor(private readonly model: string) {}

    async upsert(id: string, payload: Record<string, unknown>, expiresIn?: number) {
      const userCode = payload.userCode as string | undefined
      stmts.upsert.run({
        instance: instanceId,
        model: this.model,
        id: codec.key(id),
        payload: codec.store(this.model, payload),
        grantId: (payload.grantId as string) ?? null,
        userCode: userCode ? codec.key(userCode) : null,
        uid: (payload.uid as string) ?? null,
        accountId: accountOf(payload),
        expiresAt: expiresIn ? core.clock.now() + expiresIn * 1000 : null,
      })
    }

    async find(id: string) {
      if (this.model === 'Client') return findClient(id)
      const row = stmts.find.get({ instance: instanceId, model: this.model, id: codec.key(id) })
      return decode(this.model, row, { id })
    }

    async findByUserCode(userCode: string) {
      const row = stmts.byUserCode.get({
        instance: instanceId,
        model: this.model,
        value: codec.key(userCode),
      })
      return decode(this.model, row, { userCode })
    }

    async findByUid(uid: string) {
      return decode(this.model, stmts.byUid.get({ instance: instanceId, model: this.model, value: uid }), {})
    }

    async consume(id: string) {
      stmts.consume.run({ instance: instanceId, model: this.model, id: codec.key(id), now: core.clock.now() })
    }

    async destroy(id: string) {
      stmts.destroy.run({ instance: instanceId, model: this.model, id: codec.key(id) })
    }

    async revokeByGrantId(grantId: string) {
      stmts.revoke.run({ instance: instanceId, grantId })
    }
  }
}
