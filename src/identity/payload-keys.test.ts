import { afterAll, describe, expect, it } from 'bun:test'
import { rmSync } from 'node:fs'
import { testCore } from '../../tests/support/core'
import { accountOf, HASHED_PREFIX, payloadCodec } from './payload-keys'

const core = await testCore()
afterAll(async () => {
  await core.store.close()
  rmSync(core.config.dataDir, { recursive: true, force: true })
})
const codec = payloadCodec(core, 'platform')

describe('payloadCodec', () => {
  it('keys ids by a keyed hash that depends on the master key', async () => {
    const key = codec.key('refresh-token-value')
    expect(key).toStartWith(HASHED_PREFIX)
    expect(key).not.toContain('refresh-token-value')
    expect(codec.key('refresh-token-value')).toBe(key)
    const other = await testCore()
    expect(payloadCodec(other, 'platform').key('refresh-token-value')).not.toBe(key)
    await other.store.close()
    rmSync(other.config.dataDir, { recursive: true, force: true })
  })

  it('stores a device code without its id or user code, and restores both from the lookup', () => {
    const payload = { iat: 1, exp: 2, jti: 'device-code-value', userCode: 'BCDFGHJK', kind: 'DeviceCode' }
    const stored = codec.store('DeviceCode', payload)
    expect(stored).not.toContain('device-code-value')
    expect(stored).not.toContain('BCDFGHJK')
    expect(codec.restore('DeviceCode', stored, { id: 'device-code-value' })).toMatchObject({
      jti: 'device-code-value',
      kind: 'DeviceCode',
    })
    // Found by user code, it gets its id back (sealed) so that saving it updates the same row.
    expect(codec.restore('DeviceCode', stored, { userCode: 'BCDFGHJK' })).toEqual(payload)
  })

  it('keeps no session id or device code in an interaction', () => {
    const payload = {
      jti: 'interaction-uid',
      kind: 'Interaction',
      session: { accountId: 'usr_1', uid: 'session-uid', cookie: 'session-id-value' },
      deviceCode: 'device-code-value',
    }
    const stored = codec.store('Interaction', payload)
    expect(stored).not.toContain('session-id-value')
    expect(stored).not.toContain('device-code-value')
    expect(codec.restore('Interaction', stored, { id: 'interaction-uid' })).toEqual({
      jti: 'interaction-uid',
      kind: 'Interaction',
      session: { accountId: 'usr_1', uid: 'session-uid' },
      deviceCode: 'device-code-value',
    })
    // Sealed for this instance: another instance's codec cannot open it.
    expect(() =>
      payloadCodec(core, 'other').restore('Interaction', stored, { id: 'interaction-uid' }),
    ).toThrow()
  })

  it('names the account of tokens, interactions with a session and finished logins', () => {
    expect(accountOf({ accountId: 'usr_a' })).toBe('usr_a')
    expect(accountOf({ session: { accountId: 'usr_b' } })).toBe('usr_b')
    expect(accountOf({ result: { login: { accountId: 'usr_c' } } })).toBe('usr_c')
    expect(accountOf({ clientId: 'x' })).toBeNull()
  })
})
