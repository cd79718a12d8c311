import { afterAll, describe, expect, it } from 'bun:test'
import { rmSync } from 'node:fs'
import { Secret, TOTP } from 'otpauth'
import { testCore } from '../../../tests/support/core'
import { signUp } from '../accounts'
import { purgeExpiredIdentityRows } from '../purge'
import { accountPasskeys } from '../schema'
import { deleteInstanceData } from '../teardown'
import { accountMfaSummary } from './factors'
import { authenticationOptions } from './passkeys'
import { issueRecoveryCodes, useRecoveryCode } from './recovery'
import { resetAccountMfa } from './reset'
import { startTotpEnrolment, useTotpCode } from './totp'

const core = await testCore()
afterAll(async () => {
  await core.store.close()
  rmSync(core.config.dataDir, { recursive: true, force: true })
})

const ws = '5b1d7c1e-3f52-4a8e-9b0c-6d2e4f1a8c3b'
const count = async (table: string) =>
  Number((await core.store.query<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`))[0]?.n)

/** An account with a confirmed authenticator app, ten recovery codes and one passkey. */
async function enrolled(email: string) {
  const account = await signUp(core, ws, { email, password: 'a long password' })
  const enrolment = await startTotpEnrolment(core, account, 'Acme')
  if (!enrolment) throw new Error('no enrolment')
  expect(enrolment.uri).toStartWith('otpauth://totp/Acme:')
  expect(enrolment.qrSvg).toStartWith('<svg')
  const code = new TOTP({ secret: Secret.fromBase32(enrolment.secret) }).generate({
    timestamp: core.clock.now(),
  })
  const codes = await core.store.tx(async (tx) => {
    expect(await useTotpCode(tx, core, account.id, code, { confirm: true })).toBe(true)
    return issueRecoveryCodes(tx, core, account)
  })
  await core.db.insert(accountPasskeys).values({
    credentialId: `cred-${account.id}`,
    accountId: account.id,
    instanceId: ws,
    publicKey: 'AA',
    counter: 0,
    transports: ['internal'],
    deviceType: 'singleDevice',
    backedUp: false,
    createdAt: core.clock.now(),
  })
  return { account, secret: enrolment.secret, codes }
}

describe('MFA rows', () => {
  it('confirms an app once, refuses a code of a step already used, spends a recovery code once', async () => {
    const { account, secret, codes } = await enrolled('ada@example.com')
    // The confirmed secret is never handed out again.
    expect(await startTotpEnrolment(core, account, 'Acme')).toBeNull()
    const totp = new TOTP({ secret: Secret.fromBase32(secret) })
    const now = totp.generate({ timestamp: core.clock.now() })
    expect(await useTotpCode(core.store, core, account.id, now, { confirm: false })).toBe(false)
    core.clock.advance(30_000)
    const next = totp.generate({ timestamp: core.clock.now() })
    const both = await Promise.all([
      useTotpCode(core.store, core, account.id, next, { confirm: false }),
      useTotpCode(core.store, core, account.id, next, { confirm: false }),
    ])
    expect(both.filter(Boolean)).toHaveLength(1)
    expect(await useRecoveryCode(core.store, core, account.id, codes[0]!)).toBe(true)
    expect(await useRecoveryCode(core.store, core, account.id, codes[0]!)).toBe(false)
  })

  it('summarises, resets one account, purges expired challenges, and goes with the instance', async () => {
    const a = await enrolled('grace@example.com')
    const b = await enrolled('joan@example.com')
    const summary = await accountMfaSummary(core, ws, [a.account.id, b.account.id, 'usr_none'])
    expect(summary.get(a.account.id)).toEqual({ totp: true, passkeys: 1 })
    expect(summary.get('usr_none')).toEqual({ totp: false, passkeys: 0 })

    await authenticationOptions(core, ws, a.account.id)
    await resetAccountMfa(core, ws, a.account.id)
    await resetAccountMfa(core, ws, a.account.id)
    expect((await accountMfaSummary(core, ws, [a.account.id])).get(a.account.id)).toEqual({
      totp: false,
      passkeys: 0,
    })
    expect((await accountMfaSummary(core, ws, [b.account.id])).get(b.account.id)).toEqual({
      totp: true,
      passkeys: 1,
    })

    await authenticationOptions(core, ws, null)
    expect(await count('webauthn_challenges')).toBe(1)
    core.clock.advance(6 * 60_000)
    expect((await purgeExpiredIdentityRows(core)).webauthn_challenges).toBe(1)

    await deleteInstanceData(core, ws)
    for (const table of ['account_totp', 'account_recovery_codes', 'account_passkeys', 'webauthn_challenges'])
      expect(await count(table)).toBe(0)
  })
})
