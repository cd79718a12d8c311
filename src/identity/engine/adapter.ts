import type { Core } from '../../core'
import { accountOf, type PayloadCodec } from '../payload-keys'
import { current } from '../provider/instance-scope'

/** oidc-provider's adapter contract (one class per Provider, one object per model). */
interface OidcAdapter {
  upsert(id: string, payload: Record<string, unknown>, expiresIn?: number): Promise<void>
  find(id: string): Promise<Record<string, unknown> | undefined> | Record<string, unknown> | undefined
  findByUserCode(userCode: string): Promise<Record<string, unknown> | undefined>
  findByUid(uid: string): Promise<Record<string, unknown> | undefined>
  consume(id: string): Promise<void>
  destroy(id: string): Promise<void>
  revokeByGrantId(grantId: string): Promise<void>
}

// A save without the user code (a device code found by id) keeps the one stored.
const UPSERT = `
  INSERT INTO oidc_payloads (instance_id, model, id, payload, grant_id, user_code, uid, account_id, expires_at, consumed_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, NULL)
  ON CONFLICT (instance_id, model, id) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id,
    user_code = COALESCE(excluded.user_code, oidc_payloads.user_code), uid = excluded.uid,
    account_id = COALESCE(excluded.account_id, oidc_payloads.account_id), expires_at = excluded.expires_at`
const SELECT =
  'SELECT payload, expires_at, consumed_at FROM oidc_payloads WHERE instance_id = $1 AND model = $2'
const FIND = `${SELECT} AND id = $3`
const BY_USER_CODE = `${SELECT} AND user_code = $3`
const BY_UID = `${SELECT} AND uid = $3`
const CONSUME = 'UPDATE oidc_payloads SET consumed_at = $4 WHERE instance_id = $1 AND model = $2 AND id = $3'
const DESTROY = 'DELETE FROM oidc_payloads WHERE instance_id = $1 AND model = $2 AND id = $3'
const REVOKE = 'DELETE FROM oidc_payloads WHERE instance_id = $1 AND grant_id = $2'

interface PayloadRow {
  payload: string
  expires_at: number | null
  consumed_at: number | null
}

/**
 * The store adapter of the shared Provider (one class, one object per model): every call is for
 * the served instance (`current()`), its rows keyed by its id. Clients come from the instance's
 * finder (`clients.ts`: no rebuild for a new app); every other model lives in `oidc_payloads`,
 * keyed and scrubbed by the instance's `payloadCodec` so the table holds no working credential.
 * Raw SQL on the hot path, the same on SQLite and PostgreSQL.
 */
export function createAdapterClass(core: Core) {
  const { store } = core

  const decode = (
    codec: PayloadCodec,
    model: string,
    rows: PayloadRow[],
    by: { id?: string; userCode?: string },
  ) => {
    const r = rows[0]
    if (!r || (r.expires_at !== null && r.expires_at <= core.clock.now())) return undefined
    const payload = codec.restore(model, r.payload, by)
    if (r.consumed_at !== null) payload.consumed = Math.floor(r.consumed_at / 1000)
    return payload
  }

  return class StoreAdapter implements OidcAdapter {
    constructor(private readonly model: string) {}

    async upsert(id: string, payload: Record<string, unknown>, expiresIn?: number) {
      const { id: instanceId, codec } = current()
      const userCode = payload.userCode as string | undefined
      await store.exec(UPSERT, [
        instanceId,
        this.model,
        codec.key(id),
        codec.store(this.model, payload),
        (payload.grantId as string) ?? null,
        userCode ? codec.key(userCode) : null,
        (payload.uid as string) ?? null,
        accountOf(payload),
        expiresIn ? core.clock.now() + expiresIn * 1000 : null,
      ])
    }

    // Not async: a remembered client is answered without a promise of its own (every token request).
    find(id: string) {
      const { id: instanceId, codec, findClient } = current()
      if (this.model === 'Client') return findClient(id)
      return store
        .query<PayloadRow>(FIND, [instanceId, this.model, codec.key(id)])
        .then((rows) => decode(codec, this.model, rows, { id }))
    }

    async findByUserCode(userCode: string) {
      const { id: instanceId, codec } = current()
      const rows = await store.query<PayloadRow>(BY_USER_CODE, [instanceId, this.model, codec.key(userCode)])
      return decode(codec, this.model, rows, { userCode })
    }

    async findByUid(uid: string) {
      const { id: instanceId, codec } = current()
      return decode(
        codec,
        this.model,
        await store.query<PayloadRow>(BY_UID, [instanceId, this.model, uid]),
        {},
      )
    }

    async consume(id: string) {
      const { id: instanceId, codec } = current()
      await store.exec(CONSUME, [instanceId, this.model, codec.key(id), core.clock.now()])
    }

    async destroy(id: string) {
      const { id: instanceId, codec } = current()
      await store.exec(DESTROY, [instanceId, this.model, codec.key(id)])
    }

    async revokeByGrantId(grantId: string) {
      await store.exec(REVOKE, [current().id, grantId])
    }
  }
}
