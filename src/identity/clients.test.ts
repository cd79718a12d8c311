import { describe, expect, it } from 'bun:test'
import type { Core } from '../core'
import { createClientFinder } from './clients'
import type { ClientRecord } from './deps'
import { MEMO_MS } from './instances'

const ws = '3f0c6f5e-8a0b-4c53-9d8e-2b7f0c1a9e44'

describe('client finder', () => {
  it('remembers the clients found lately, up to 1,000, oldest first out, and forgets them after MEMO_MS', async () => {
    let now = 1_000_000
    const asked: string[] = []
    const core = { clock: { now: () => now } } as unknown as Core
    const find = createClientFinder(core, ws, {
      find: async (_instanceId, clientId): Promise<ClientRecord> => {
        asked.push(clientId)
        return {
          clientId,
          name: clientId,
          clientSecretHash: 'h',
          type: 'web',
          redirectUris: ['https://rp.example/cb'],
          postLogoutRedirectUris: [],
          extraGrants: [],
        }
      },
    })
    for (let i = 0; i <= 1000; i++) expect(await find(`c${i}`)).toMatchObject({ client_id: `c${i}` })
    expect(asked).toHaveLength(1001)
    // Remembered: answered at once, without a promise.
    expect(find('c1000')).toMatchObject({ client_id: 'c1000' })
    expect(find('c1')).toMatchObject({ client_id: 'c1' })
    // The oldest went when the 1,001st came.
    await find('c0')
    expect(asked).toHaveLength(1002)
    now += MEMO_MS + 1
    await find('c1000')
    expect(asked).toHaveLength(1003)
  })
})
