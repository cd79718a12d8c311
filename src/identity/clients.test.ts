// legs: once — unit test; no store
import { describe, expect, it } from 'bun:test'
import type { Core } from '../core'
import { createClientFinder } from './clients'
import type { ClientRecord } from './deps'
import { MEMO_MS, REFRESH_AHEAD_MS } from './instances'

const ws = '3f0c6f5e-8a0b-4c53-9d8e-2b7f0c1a9e44'

describe('client finder', () => {
  it('remembers the clients found lately, up to 1,000, oldest first out, and forgets them after MEMO_MS', async () => {
    let now = 1_000_000
    const asked: string[] = []
    const core = { clock: { now: () => now } } as unknown as Core
    const find = createClientFinder(core, ws, {
      machineGrants: ['client_credentials'],
      builtIns: [],
      ahead: () => Promise.reject(new Error('no read ahead here: no memo reaches its end')),
      now: async (_instanceId, clientId): Promise<ClientRecord> => {
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

  it('reads a client in use again before its memo ends, in the background, and keeps its Client when unchanged', async () => {
    let now = 1_000_000
    const reads: { ahead: boolean; answer: (c: ClientRecord | null) => void }[] = []
    const core = { clock: { now: () => now } } as unknown as Core
    const record = (name: string): ClientRecord => ({
      clientId: 'app',
      name,
      clientSecretHash: 'h',
      type: 'web',
      redirectUris: ['https://rp.example/cb'],
      postLogoutRedirectUris: [],
      extraGrants: [],
    })
    const read = (ahead: boolean) => () =>
      new Promise<ClientRecord | null>((answer) => reads.push({ ahead, answer }))
    const find = createClientFinder(core, ws, {
      now: read(false),
      ahead: read(true),
      machineGrants: ['client_credentials'],
      builtIns: [],
    })
    const first = find('app')
    reads[0]!.answer(record('App'))
    expect(await first).toMatchObject({ client_name: 'App' })
    const client = { made: 'of the first metadata' }
    find.remembered.set('app', client)

    // Before the last REFRESH_AHEAD_MS: no read.
    now += MEMO_MS - REFRESH_AHEAD_MS - 1
    expect(find.remembered.get('app')).toBe(client)
    expect(reads).toHaveLength(1)
    // Within it: answered at once as before, and read again behind the answer, once.
    now += 2
    expect(find.remembered.get('app')).toBe(client)
    expect(find('app')).toMatchObject({ client_name: 'App' })
    expect(reads.map((r) => r.ahead)).toEqual([false, true])
    reads[1]!.answer(record('App'))
    await Bun.sleep(0)
    // Unchanged: the same Client, remembered MEMO_MS from that read, with no request waiting.
    now += MEMO_MS - REFRESH_AHEAD_MS - 2
    expect(find.remembered.get('app')).toBe(client)
    expect(reads).toHaveLength(2)
    // Read ahead again and found changed (renamed by hand): the new metadata, for a new Client.
    now += 2
    expect(find.remembered.get('app')).toBe(client)
    reads[2]!.answer(record('Renamed'))
    await Bun.sleep(0)
    expect(find.remembered.get('app')).toMatchObject({ client_name: 'Renamed' })
    expect(find('app')).toMatchObject({ client_name: 'Renamed' })

    // A client nobody asks for in its last REFRESH_AHEAD_MS is not read again: its memo ends.
    now += MEMO_MS + 1
    const after = find('app')
    expect(after).toBeInstanceOf(Promise)
    expect(reads.map((r) => r.ahead)).toEqual([false, true, true, false])
  })

  it("answers its instance's built-in clients from code, without a read, and reads another instance's as any id", async () => {
    const asked: string[] = []
    const core = { clock: { now: () => 1_000_000 } } as unknown as Core
    const idOf = (instanceId: string) => `built-in-${instanceId}`
    const reads = {
      machineGrants: ['client_credentials'],
      builtIns: [
        {
          clientId: idOf,
          record: (instanceId: string): ClientRecord => ({
            clientId: idOf(instanceId),
            name: 'A built-in client',
            clientSecretHash: null,
            type: 'spa',
            redirectUris: [`https://gh.example/${instanceId}/callback`],
            postLogoutRedirectUris: [],
            extraGrants: [],
          }),
        },
      ],
      ahead: () => Promise.reject(new Error('no read ahead here')),
      now: async (_instanceId: string, clientId: string) => {
        asked.push(clientId)
        return null
      },
    }
    const find = createClientFinder(core, ws, reads)
    expect(find(idOf(ws))).toMatchObject({
      client_id: idOf(ws),
      token_endpoint_auth_method: 'none',
      redirect_uris: [`https://gh.example/${ws}/callback`],
    })
    expect(find.remembered.get(idOf(ws))).toMatchObject({ client_id: idOf(ws) })
    const other = '7d1e2a40-5b6c-4d7e-8f90-a1b2c3d4e5f6'
    expect(await find(idOf(other))).toBeUndefined()
    expect(asked).toEqual([idOf(other)])
  })
})
