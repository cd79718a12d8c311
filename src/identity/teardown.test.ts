import { afterAll, describe, expect, it } from 'bun:test'
import { rmSync } from 'node:fs'
import { testCore } from '../../tests/support/core'
import { instanceKey } from '../limits/buckets'
import { issueAccountToken, signUp } from './accounts'
import { ensureInstanceKeys } from './engine/keys'
import { payloadCodec } from './payload-keys'
import { deleteInstanceData } from './teardown'

const core = await testCore()
afterAll(async () => {
  await core.store.close()
  rmSync(core.config.dataDir, { recursive: true, force: true })
})

const gone = '3f0c6f5e-8a0b-4c53-9d8e-2b7f0c1a9e44'
const kept = '7d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6'

/** What an instance leaves in the store once it has served: keys, accounts, mailed tokens, oidc rows, counters. */
async function seed(instanceId: string) {
  await ensureInstanceKeys(core, instanceId)
  const account = await signUp(core, instanceId, { email: 'ada@example.com', password: 'a long password' })
  await issueAccountToken(core, account, 'verify_email', 60_000)
  await core.store.exec(
    "INSERT INTO oidc_payloads (instance_id, model, id, payload, account_id) VALUES ($1, 'Session', $2, '{}', $3)",
    [instanceId, payloadCodec(core, instanceId).key('sid'), account.id],
  )
  await core.limiter.takeAll([
    ['signInAccount', instanceKey(instanceId, account.email)],
    ['signInAddress', instanceKey(instanceId, '198.51.100.7')],
    ['resetMail', instanceKey(instanceId, account.email)],
  ])
}

const TABLES = ['instance_keys', 'instance_secrets', 'accounts', 'account_tokens', 'oidc_payloads']
const countOf = async (text: string, param: string) =>
  Number((await core.store.query<{ n: number | string }>(text, [param]))[0]?.n)
const rowsOf = async (instanceId: string) => {
  const rows: Record<string, number> = {}
  for (const table of TABLES)
    rows[table] = await countOf(`SELECT count(*) AS n FROM ${table} WHERE instance_id = $1`, instanceId)
  rows.login_throttle = await countOf(
    'SELECT count(*) AS n FROM login_throttle WHERE key LIKE $1',
    `%:${instanceId}:%`,
  )
  return rows
}

describe('deleteInstanceData', () => {
  it("deletes every row of the instance and none of another instance's", async () => {
    await seed(gone)
    await seed(kept)
    const before = await rowsOf(kept)
    expect(Object.values(await rowsOf(gone)).every((n) => n > 0)).toBe(true)

    await deleteInstanceData(core, gone)
    expect(Object.values(await rowsOf(gone))).toEqual([0, 0, 0, 0, 0, 0])
    expect(await rowsOf(kept)).toEqual(before)

    // A teardown that stopped half-way runs it again.
    await deleteInstanceData(core, gone)
    expect(await rowsOf(kept)).toEqual(before)
  })
})
