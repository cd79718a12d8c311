import { afterAll, beforeAll, describe, expect, it, spyOn } from 'bun:test'
import { decodeJwt, decodeProtectedHeader } from 'jose'
import type Provider from 'oidc-provider'
import { type TestCore, testCore } from '../../../tests/support/core'
import { clientReads } from '../clients'
import { inject } from '../engine/inject'
import { ensureInstanceKeys, loadInstanceKeys } from '../engine/keys'
import { MEMO_MS } from '../instances'
import { DEFAULT_LOGIN_POLICY } from '../login-policy'
import { buildProvider, type ServedInstance, servedInstance, serving } from '.'

// The shared Provider's own guarantees, below the HTTP tests (tests/instance-isolation.test.ts):
// what it reads is the served instance's, and outside a served request it reads nothing.
const A = '0a0a0a0a-0000-4000-8000-00000000000a'
const B = '0b0b0b0b-0000-4000-8000-00000000000b'

/** A web app's row as the apps feature answers it, its secret `secret`. */
const webApp = (clientId: string, name = 'app') => ({
  clientId,
  name,
  // sha256('secret')
  clientSecretHash: '2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b',
  type: 'web' as const,
  redirectUris: ['https://rp.example/cb'],
  postLogoutRedirectUris: [],
  extraGrants: [],
})

let core: TestCore
let provider: Provider
const served: Record<string, ServedInstance> = {}

beforeAll(async () => {
  core = await testCore()
  provider = buildProvider(core, { claims: [], steps: [], grants: [] })
  const clients = clientReads({
    find: async (wanted) =>
      wanted.map(({ instanceId, clientId }) => (clientId === `app-${instanceId}` ? webApp(clientId) : null)),
  })
  for (const id of [A, B]) {
    await ensureInstanceKeys(core, id)
    const keys = (await loadInstanceKeys(core, id))!
    served[id] = {
      ...servedInstance(core, id, `/i/${id}`, keys, clients),
      policy: { ...DEFAULT_LOGIN_POLICY },
    }
  }
})

afterAll(async () => {
  await core.store.close()
})

const callback = () => provider.callback()

function request(id: string, method: string, path: string, headers: Record<string, string> = {}, body = '') {
  const instance = served[id]!
  const handler = callback()
  return inject((req, res) => serving(instance, () => handler(req, res)), {
    method,
    url: path,
    originalUrl: `${instance.prefix}${path}`,
    headers: {
      host: '127.0.0.1:1',
      'x-forwarded-proto': 'http',
      'x-forwarded-host': '127.0.0.1:1',
      ...headers,
    },
    body: body ? new TextEncoder().encode(body) : null,
    remoteAddress: '127.0.0.1',
  })
}

const token = (at: string, clientId: string) =>
  request(
    at,
    'POST',
    '/token',
    {
      authorization: `Basic ${btoa(`${clientId}:secret`)}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    'grant_type=client_credentials',
  )

describe('the shared Provider', () => {
  it('reads nothing of an instance outside a request served for one', () => {
    expect(() => provider.issuer).toThrow('outside a request')
    expect(() => (provider as unknown as { keys: unknown }).keys).toThrow('outside a request')
    expect(() => provider.urlFor('token')).toThrow('outside a request')
  })

  it("answers each instance's requests with that instance's issuer, URLs and keys", () => {
    for (const id of [A, B]) {
      serving(served[id]!, () => {
        expect(provider.issuer).toBe(served[id]!.issuer)
        expect(provider.urlFor('token')).toBe(`${served[id]!.issuer}/token`)
      })
    }
  })

  it('signs each token with its own instance key and issuer, and refuses the other instance its client', async () => {
    const jwks = await Promise.all([A, B].map(async (id) => (await request(id, 'GET', '/jwks')).json()))
    const kids = jwks.map((j) => (j as { keys: { kid: string; d?: string }[] }).keys.map((k) => k.kid))
    expect(kids[0]).toHaveLength(2)
    expect(kids[0]!.some((kid) => kids[1]!.includes(kid))).toBe(false)
    for (const set of jwks) expect(JSON.stringify(set)).not.toContain('"d"')
    // Interleaved and concurrent: A, B, A at B, B at A.
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => {
        const pairs: [string, string][] = [
          [A, A],
          [B, B],
          [B, A],
          [A, B],
        ]
        const [at, of] = pairs[i % 4]!
        return token(at, `app-${of}`).then(async (r) => ({ at, of, status: r.status, body: await r.json() }))
      }),
    )
    for (const { at, of, status, body } of answers) {
      if (at === of) {
        expect(status).toBe(200)
        const jwt = (body as { access_token: string }).access_token
        expect(decodeJwt(jwt).iss).toBe(served[at]!.issuer)
        expect(decodeJwt(jwt).aud).toBe(served[at]!.issuer)
        expect(kids[at === A ? 0 : 1]).toContain(decodeProtectedHeader(jwt).kid!)
      } else {
        expect({ status, error: (body as { error: string }).error }).toEqual({
          status: 401,
          error: 'invalid_client',
        })
      }
    }
  })

  it("scopes the cookies of an instance's sign-in to that instance's path", async () => {
    const res = await request(
      A,
      'GET',
      `/auth?client_id=app-${A}&response_type=code&scope=openid&redirect_uri=https://rp.example/cb`,
    )
    expect(res.status).toBe(303)
    const cookies = res.headers.getSetCookie()
    expect(cookies.length).toBeGreaterThan(0)
    expect(cookies.every((c) => c.includes(`path=/i/${A}`))).toBe(true)
  })
})

describe("an instance's sealed keys", () => {
  it('are opened by their first use, each once: not by the load, discovery or the jwks', async () => {
    const C = '0c0c0c0c-0000-4000-8000-00000000000c'
    await ensureInstanceKeys(core, C)
    const open = spyOn(core.secrets, 'open')
    try {
      const keys = (await loadInstanceKeys(core, C))!
      expect(keys.keys.map((k) => k.publicJwk.alg)).toEqual(['RS256', 'ES256'])
      for (const k of keys.keys) expect(k.publicJwk.d).toBeUndefined()
      const clients = clientReads({
        find: async (wanted) => wanted.map(({ clientId }) => webApp(clientId)),
      })
      served[C] = {
        ...servedInstance(core, C, `/i/${C}`, keys, clients),
        policy: { ...DEFAULT_LOGIN_POLICY },
      }
      expect((await request(C, 'GET', '/.well-known/openid-configuration')).status).toBe(200)
      const jwks = (await (await request(C, 'GET', '/jwks')).json()) as { keys: { kid: string }[] }
      expect(jwks.keys.map((k) => k.kid)).toEqual(keys.keys.map((k) => String(k.publicJwk.kid)))
      expect(open).not.toHaveBeenCalled()
      // A client-credentials token signs with the ES256 key: that key is opened, once.
      for (let i = 0; i < 3; i++) {
        const res = await token(C, 'app-c')
        expect(res.status).toBe(200)
        const { access_token } = (await res.json()) as { access_token: string }
        expect(decodeProtectedHeader(access_token).kid).toBe(String(keys.keys[1]!.publicJwk.kid))
      }
      expect(open.mock.calls.map(([, context]) => context)).toEqual([
        `instance-key:${keys.keys[1]!.publicJwk.kid}`,
      ])
      // A sign-in sets signed cookies: the cookie keys are opened, once; the RS256 key still never.
      const auth = `/auth?client_id=app-c&response_type=code&scope=openid&redirect_uri=https://rp.example/cb`
      for (let i = 0; i < 2; i++) expect((await request(C, 'GET', auth)).status).toBe(303)
      expect(open.mock.calls.map(([, context]) => context)).toEqual([
        `instance-key:${keys.keys[1]!.publicJwk.kid}`,
        `cookie-keys:${C}`,
      ])
    } finally {
      open.mockRestore()
    }
  })
})

describe("a remembered client's Client object", () => {
  it('is found by its id, without the metadata serialised and hashed again, until the memo ends', async () => {
    const instance = served[A]!
    const clientId = `app-${A}`
    expect((await token(A, clientId)).status).toBe(200)
    const built = instance.findClient.remembered.get(clientId)
    expect(built).toBeInstanceOf(provider.Client)
    const stringify = spyOn(JSON, 'stringify')
    try {
      const found = await serving(instance, () => provider.Client.find(clientId))
      expect(found).toBe(built as never)
      // The dynamic path finds a Client by a digest of JSON.stringify(metadata).
      const ofMetadata = stringify.mock.calls.filter(
        ([v]) => (v as { client_id?: string })?.client_id === clientId,
      )
      expect(ofMetadata).toHaveLength(0)
    } finally {
      stringify.mockRestore()
    }
    expect((await token(A, clientId)).status).toBe(200)
    expect(instance.findClient.remembered.get(clientId)).toBe(built)
    // Past the memo the client is read again (the dynamic path): the Client that path finds for
    // what was read (the same metadata, so the same Client) is remembered with it at once.
    core.clock.advance(MEMO_MS + 1)
    expect(instance.findClient.remembered.get(clientId)).toBeUndefined()
    expect((await token(A, clientId)).status).toBe(200)
    expect(instance.findClient.remembered.get(clientId)).toBe(built)
  })
})

describe('an instance record', () => {
  it("keeps at most 100 of oidc-provider's Client objects, the oldest out first", async () => {
    const many = {
      ...servedInstance(
        core,
        A,
        `/i/${A}`,
        (await loadInstanceKeys(core, A))!,
        clientReads({
          find: async (wanted) => wanted.map(({ clientId }) => webApp(clientId, clientId)),
        }),
      ),
      policy: { ...DEFAULT_LOGIN_POLICY },
    }
    await serving(many, async () => {
      for (let i = 0; i < 150; i++)
        expect((await provider.Client.find(`client-${i}`))?.clientId).toBe(`client-${i}`)
    })
    expect(many.clientObjects.size).toBe(100)
  })
})
