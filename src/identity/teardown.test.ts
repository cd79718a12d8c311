import { afterAll, describe, expect, it } from 'bun:test'
import { rmSync } from 'node:fs'
import { testCore } from '../../tests/support/core'
import { issueAccountToken, signUp } from './accounts'
import { ensureInstanceKeys } from './keys'
import { payloadCodec } from './payload-keys'
import { deleteInstanceData } from './teardown'
import { LoginThrottle, SIGN_IN_RULES, throttleKey } from './throttle'

const core = testCore()
afterAll(() => rmSync(core.config.dataDir, { recursive: true, force: true }))

const gone = '3f0c6f5e-8a0b-4c53-9d8e-2b7f0c1a9e44'
const kept = '7d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6'

/** What an instance leaves in the store once it has served: keys, accounts, mailed tokens, oidc rows, counters. */
async function seed(instanceId: string) {
  await ensureInstanceKeys(core, instanceId)
  const account = await signUp(core, instanceId, { email: 'ada@example.com', password: 'a long password' })
  issueAccountToken(core, account, 'verify_email', 60_000)
  core.db.$client
    .query(
      "INSERT INTO oidc_payloads (instance_id, model, id, payload, account_id) VALUES ($instance, 'Session', $id, '{}', $account)",
    )
    .run({ instance: instanceId, id: payloadCodec(core, instanceId).key('sid'), account: account.id })
  const throttle = new LoginThrottle(core)
  throttle.reserve([
    [throttleKey('acct', instanceId, account.email), SIGN_IN_RULES.account],
    [throttleKey('ip', instanceId, '198.51.100.7'), SIGN_IN_RULES.ip],
    [throttleKey('reset', instanceId, account.email), SIGN_IN_RULES.account],
  ])
}

const TABLES = ['instance_keys', 'instance_secrets', 'accounts', 'account_tokens', 'oidc_payloads']
const rowsOf = (instanceId: string) => ({
  ...Object.fromEntries(
    TABLES.map((table) => [
      table,
      (
        core.db.$client
          .query(`SELECT count(*) AS n FROM ${table} WHERE instance_id = $instance`)
          .get({ instance: instanceId }) as { n: number }
      ).n,
    ]),
  ),
  login_throttle: (
    core.db.$client
      .query('SELECT count(*) AS n FROM login_throttle WHERE key LIKE $pattern')
      .get({ pattern: `%:${instanceId}:%` }) as { n: number }
  ).n,
})

describe('deleteInstanceData', () => {
  it("deletes every row of the instance and none of another instance's", async () => {
    await seed(gone)
    await seed(kept)
    const before = rowsOf(kept)
    expect(Object.values(rowsOf(gone)).every((n) => n > 0)).toBe(true)

    deleteInstanceData(core, gone)
    expect(Object.values(rowsOf(gone))).toEqual([0, 0, 0, 0, 0, 0])
    expect(rowsOf(kept)).toEqual(before)

    // A teardown that stopped half-way runs it again.
    deleteInstanceData(core, gone)
    expect(rowsOf(kept)).toEqual(before)
  })
})
