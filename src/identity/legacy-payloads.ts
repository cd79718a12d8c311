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
 * today, so nobody has to sign in again, and the store is compacted so that no old credential
 * stays readable in freed pages. Runs once per store (recorded in `upgrade_steps`); nodes starting
 * together may both run it, harmlessly (a rewritten row no longer matches).
 */
export async function rehashLegacyPayloads(core: Core): Promise<number> {
  const { store } = core
  const done = () =>
    store.exec('INSERT INTO upgrade_steps (name, done_at) VALUES ($1, $2) ON CONFLICT DO NOTHING', [
      STEP,
      core.clock.now(),
    ])
  if ((await store.query('SELECT 1 AS done FROM upgrade_steps WHERE name = $1', [STEP])).length > 0) return 0
  const rows = await store.query<LegacyRow>(
    `SELECT instance_id, model, id, payload, user_code FROM oidc_payloads WHERE substr(id, 1, ${HASHED_PREFIX.length}) <> $1`,
    [HASHED_PREFIX],
  )
  if (rows.length === 0) {
    await done()
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
  // Rewritten before the transaction: it only writes.
  const updates = rows.map((row) => {
    const codec = codecOf(row.instance_id)
    const payload = { ...(JSON.parse(row.payload) as Record<string, unknown>), jti: row.id }
    return [
      codec.key(row.id),
      codec.store(row.model, payload),
      row.user_code ? codec.key(row.user_code) : null,
      accountOf(payload),
      row.instance_id,
      row.model,
      row.id,
    ]
  })
  await store.tx(async (tx) => {
    for (const params of updates) {
      await tx.exec(
        `UPDATE oidc_payloads SET id = $1, payload = $2, user_code = $3, account_id = $4
         WHERE instance_id = $5 AND model = $6 AND id = $7`,
        params,
      )
    }
  })
  // Every earlier save left copies of raw ids in freed space: rebuild the file without them, then
  // fold the write-ahead log (which holds the old pages too) back into it. PostgreSQL rewrites the
  // table instead.
  if (store.dialect === 'sqlite') {
    await store.exec('VACUUM')
    await store.exec('PRAGMA wal_checkpoint(TRUNCATE)')
  } else {
    await store.exec('VACUUM FULL oidc_payloads')
  }
  await done()
  core.log.info('identity rows rehashed', { rows: rows.length })
  return rows.length
}
