import { describe, expect, it } from 'bun:test'
import { testCore } from '../../tests/support/core'
import { issueAccountToken, setPassword, signUp, useAccountToken } from './accounts'

describe('a password change', () => {
  it('retires every other reset link of the account: an old mail cannot reset it again', async () => {
    const core = await testCore()
    const account = await signUp(core, 'platform', {
      email: 'links@example.com',
      password: 'first password 1',
    })
    const used = await issueAccountToken(core, account, 'reset_password', 3600_000)
    const other = await issueAccountToken(core, account, 'reset_password', 3600_000)
    const verify = await issueAccountToken(core, account, 'verify_email', 24 * 3600_000)
    expect((await useAccountToken(core, 'platform', used, 'reset_password'))?.id).toBe(account.id)
    await setPassword(core, { sessions: { end: async () => {} } }, account, 'second password 2')
    expect(await useAccountToken(core, 'platform', other, 'reset_password')).toBeNull()
    // Verifying the address is not a way into the account: that link still works.
    expect((await useAccountToken(core, 'platform', verify, 'verify_email'))?.id).toBe(account.id)
  })
})

describe('sign-up', () => {
  it('refuses a name with control or text-direction characters, and takes none at all', async () => {
    const core = await testCore()
    for (const name of ['Eve\u202Egnp.exe', 'line\nbreak', 'a\u2066b'])
      await expect(
        signUp(core, 'platform', { email: 'eve@example.com', password: 'a good password 1', name }),
      ).rejects.toThrow('Remove control characters and invisible text-direction marks')
    const plain = await signUp(core, 'platform', { email: 'ann@example.com', password: 'a good password 1' })
    expect(plain.name).toBe('')
  })
})
