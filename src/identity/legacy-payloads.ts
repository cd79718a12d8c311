import type { Core } from '../core'
import { accountOf, HASHED_PREFIX, type PayloadCodec, payloadCodec } from './payload-keys'

const STEP = 'oidc-payloads-keyed-ids'

interface LegacyRow {
  instance_id: string
  model: string
  id: string
  payload: string
  user_code: string | null
}

/**
 * A database from before keyed hashing holds raw ids (refresh tokens, session ids, device codes)
 * as keys and in payloads. At start-up they are rewritten in place as the adapter writes them
 * today, so nobody has to sign in again, and the file is rebuilt so that no old credential stays
 * readable in freed pages. Runs once per store (recorded in `upgrade_steps`); nodes starting
 * together may both run it, harmlessly (a rewritten row no longer matches).
 */
export function rehashLegacyPayloads(core: Core): number {
  const sql = core.db.$client
  const done = () =>
    sql
      .query('INSERT INTO upgrade_steps (name, done_at) VALUES ($name, $now) ON CONFLICT DO NOTHING')
      .run({ name: STEP, now: core.clock.now() })
  if (sql.query('SELECT 1 FROM upgrade_steps WHERE name = $name').get({ name: STEP })) return 0
  const rows = sql
    .query(
      `SELECT instance_id, model, id, payload, user_code FROM oidc_payloads WHERE substr(id, 1, ${HASHED_PREFIX.length}) <> $prefix`,
    )
    .all({ prefix: HASHED_PREFIX }) as LegacyRow[]
  if (rows.length === 0) {
    done()
    return 0
  }

  const codecs = new Map<string, PayloadCodec>()
  const codecOf = (instanceId: string) => {
    let codec = codecs.get(instanceId)
    if (!codec) {
      codec = payloadCodec(core, instanceId)
      codecs.set(instanceId, codec)
    }
    return codec
  }
  const update = sql.prepare(`
    UPDATE oidc_payloads SET id = $key, payload = $payload, user_code = $userCode, account_id = $accountId
    WHERE instance_id = $instance AND model = $model AND id = $id`)
  sql.transaction(() => {
    for (const row of rows) {
      const codec = codecOf(row.instance_id)
      const payload = { ...(JSON.parse(row.payload) as Record<string, unknown>), jti: row.id }
      update.run({
        instance: row.instance_id,
        model: row.model,
        id: row.id,
        key: codec.key(row.id),
        payload: codec.store(row.model, payload),
        userCode: row.user_code ? codec.key(row.user_code) : null,
        accountId: accountOf(payload),
      })
    }
  })()
  // Every earlier save left copies of raw ids in freed space: rebuild the file without them, then
  // fold the write-ahead log (which holds the old pages too) back into it.
  sql.exec('VACUUM')
  sql.exec('PRAGMA wal_checkpoint(TRUNCATE)')
  done()
  core.log.info('identity rows rehashed', { rows: rows.length })
  return rows.length
}
