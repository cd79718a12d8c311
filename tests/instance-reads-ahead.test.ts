import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { eq } from 'drizzle-orm'
import { apps } from '../src/features/apps/schema'
import { issuerFor } from '../src/identity'
import { MEMO_MS, REFRESH_AHEAD_MS } from '../src/identity/instances'
import { identityExtensions } from '../src/server'
import { ManualClock } from '../src/shared/clock'
import { until } from './support/cluster'
import { activeWorkspace, clientCredentials, registerApp } from './support/instances'
import { startTestServer, type TestServer } from './support/server'

// Issue 27: a cold instance is one read (its state and rate and its oldest clients with its keys); a node's busy instances
// are read again before their memos end (their state and rate, their clients), in the background,
// and those reads are gathered into one read of many rows: with tokens at random over 10,000
// instances, a few hundred memos end each second. The server's clock is turned; the reads are seen
// in the store's statements.
const clock = new ManualClock(Date.now())
let server: TestServer
/**
 * The statements the server ran that read instances whole (state and keys), their states alone or
 * apps' clients: their parameters, their answers.
 */
const reads: { of: 'instances' | 'states' | 'clients'; params: unknown[]; answered: Promise<unknown> }[] = []

beforeAll(async () => {
  server = await startTestServer({}, undefined, { clock })
  const store = server.core.store
  const query = store.query.bind(store)
  store.query = ((text: string, params?: readonly unknown[]) => {
    const answered = query(text, params)
    const of = /FROM instance_secrets s LEFT JOIN instance_keys/.test(text)
      ? 'instances'
      : /FROM instance_secrets WHERE instance_id/.test(text)
        ? 'states'
        : /FROM instance_client_records\s+WHERE client_id/.test(text)
          ? 'clients'
          : null
    if (of) reads.push({ of, params: [...(params ?? [])], answered })
    return answered
  }) as typeof store.query
})
afterAll(() => server.stop())

async function instanceWithClient() {
  const ws = await activeWorkspace(server.core)
  const app = await registerApp(server.core, ws, { type: 'web', redirectUris: ['https://rp.example.com/cb'] })
  const token = () => clientCredentials(issuerFor(server.core.config, ws), app.clientId, app.clientSecret!)
  return { ws, clientId: app.clientId, token }
}

/** The ids a read asked for: one as itself, several as a JSON array (src/db/in-strings.ts). */
const idsOf = (param: unknown) => {
  const text = String(param)
  return text.startsWith('[') ? (JSON.parse(text) as string[]).sort() : [text]
}

describe('reads ahead', () => {
  it("gathers the busy instances' reads into one read of their states and one of their clients", async () => {
    const three = [await instanceWithClient(), await instanceWithClient(), await instanceWithClient()]
    // Each instance's first token reads the instance, one at a time (a request waits): its state,
    // keys and client in one read, though its limiter asks for the rate first. No client is read
    // on its own: it came with the instance (keys.ts OLDEST_CLIENTS).
    for (const one of three) expect((await one.token()).status).toBe(200)
    const cold = reads.splice(0)
    expect(cold.map((r) => [r.of, idsOf(r.params[0])])).toEqual(three.map((one) => ['instances', [one.ws]]))

    // The third's client is deleted by hand (no product write, so no node hears of it): only a
    // read of the store can tell its instance.
    await server.core.db.delete(apps).where(eq(apps.clientId, three[2]!.clientId))
    expect((await three[2]!.token()).status).toBe(200)

    // In the memos' last REFRESH_AHEAD_MS: every token is answered from memory at once, and the
    // three instances' reads behind them are made as one read of states and one of clients.
    clock.advance(MEMO_MS - REFRESH_AHEAD_MS + 1000)
    const answers = await Promise.all(three.map((one) => one.token()))
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200])
    await Promise.all(three.map((one) => server.identity.pool.readState(one.ws)))
    await until('the clients read ahead', () => reads.some((r) => r.of === 'clients'))
    const ahead = reads.splice(0)
    // What they found is kept once they are answered (the finders' callbacks run before a timer).
    await Promise.all(ahead.map((r) => r.answered))
    await Bun.sleep(0)
    expect(ahead.map((r) => r.of).sort()).toEqual(['clients', 'states'])
    expect(idsOf(ahead.find((r) => r.of === 'states')!.params[0])).toEqual(three.map((one) => one.ws).sort())
    const clients = ahead.find((r) => r.of === 'clients')!
    expect(idsOf(clients.params[0])).toEqual(three.map((one) => one.clientId).sort())
    // The clients' read is of those three workspaces only.
    expect(idsOf(clients.params[1])).toEqual(three.map((one) => one.ws).sort())

    // Past the first memos' end, nothing waits for a read: the two renewed, and the client
    // deleted by hand is no longer known to its instance.
    clock.advance(REFRESH_AHEAD_MS)
    expect((await three[0]!.token()).status).toBe(200)
    expect((await three[1]!.token()).status).toBe(200)
    expect(reads).toEqual([])
    const gone = await three[2]!.token()
    expect(gone.status).toBe(401)
    expect(await gone.json()).toMatchObject({ error: 'invalid_client' })
  })

  it("never hands an instance another workspace's client, even read together", async () => {
    const [one, other] = [await instanceWithClient(), await instanceWithClient()]
    const source = identityExtensions(server.core).clients
    const found = await source.find([
      { instanceId: one.ws, clientId: one.clientId },
      { instanceId: one.ws, clientId: other.clientId },
      { instanceId: other.ws, clientId: one.clientId },
      { instanceId: other.ws, clientId: other.clientId },
      { instanceId: one.ws, clientId: 'no-such-client' },
    ])
    expect(found.map((c) => c?.clientId ?? null)).toEqual([one.clientId, null, null, other.clientId, null])
  })
})
