import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { exportJWK, generateKeyPair } from 'jose'
import { type TestCore, testCore } from '../../../tests/support/core'
import { instanceKeys } from '../schema'
import { ensureInstanceKeys, loadInstanceKeys } from './keys'

// Issue 27: what a cold instance's load reads of its keys, and what waits for a first signature. The
// ES256 key signs every JWT access token: its private half comes sealed with the load, so the first
// token makes no read of its own. The RS256 one signs only ID tokens: read by its first signature.
// Seen here by sealing another JWK into a key's row after the load: a key opened from what the load
// read is unmoved by it; a key read at its first signature opens the new one.
const ID = '0c0c0c0c-0000-4000-8000-00000000000c'
// Loaded together below (ID's rows are rewritten by the first test).
const TOGETHER = [
  '0c0c0c0c-0000-4000-8000-00000000000d',
  '0c0c0c0c-0000-4000-8000-00000000000e',
  '0c0c0c0c-0000-4000-8000-00000000000f',
]
let core: TestCore

beforeAll(async () => {
  core = await testCore()
  for (const id of [ID, ...TOGETHER]) await ensureInstanceKeys(core, id)
})
afterAll(() => core.store.close())

/** Seals another key pair's private JWK (under the key's own kid and alg) into the key's row. */
async function replacePrivate(kid: string, alg: 'ES256' | 'RS256') {
  const { privateKey } = await generateKeyPair(alg, { extractable: true })
  const jwk = { ...(await exportJWK(privateKey)), kid, alg, use: 'sig' }
  await core.db
    .update(instanceKeys)
    .set({ privateJwkSealed: core.secrets.seal(JSON.stringify(jwk), `instance-key:${kid}`) })
    .where(and(eq(instanceKeys.instanceId, ID), eq(instanceKeys.kid, kid)))
  return jwk
}

describe("an instance's loaded keys", () => {
  it('bring the ES256 private key sealed; the RS256 one is read by its first signature', async () => {
    const material = (await loadInstanceKeys(core, ID))!
    const byAlg = Object.fromEntries(material.keys.map((k) => [k.publicJwk.alg, k]))
    expect(Object.keys(byAlg).sort()).toEqual(['ES256', 'RS256'])
    const es256 = byAlg.ES256!
    const rs256 = byAlg.RS256!
    const esKid = es256.publicJwk.kid as string
    const rsKid = rs256.publicJwk.kid as string

    // Written after the load: only a key read at its first signature sees it.
    await replacePrivate(esKid, 'ES256')
    const laterRs = await replacePrivate(rsKid, 'RS256')

    const esOpened = await es256.openPrivate()
    // The private half of the listed public key, as the load read it.
    expect(esOpened).toMatchObject({ kid: esKid, alg: 'ES256', x: es256.publicJwk.x, y: es256.publicJwk.y })
    expect(typeof esOpened.d).toBe('string')
    expect((await rs256.openPrivate()).d).toBe(laterRs.d)

    // A fresh load reads the row as it is now.
    const reloaded = (await loadInstanceKeys(core, ID))!
    const esAgain = reloaded.keys.find((k) => k.publicJwk.alg === 'ES256')!
    expect((await esAgain.openPrivate()).d).not.toBe(esOpened.d)
  })
})

describe('instances loaded together', () => {
  it('share one read, and each gets only its own keys', async () => {
    const kidsOf = async (id: string) =>
      (
        await core.db
          .select({ kid: instanceKeys.kid })
          .from(instanceKeys)
          .where(eq(instanceKeys.instanceId, id))
      )
        .map((r) => r.kid)
        .sort()
    const unknown = '0c0c0c0c-0000-4000-8000-0000000000ff'
    // Asked in one turn: the first is read alone, the ones asked while it is under way as one read.
    const loaded = await Promise.all([...TOGETHER, unknown].map((id) => loadInstanceKeys(core, id)))
    expect(loaded[3]).toBeNull()
    for (const [i, id] of TOGETHER.entries()) {
      const material = loaded[i]!
      expect(material.keys.map((k) => k.publicJwk.kid as string).sort()).toEqual(await kidsOf(id))
      // Its ES256 key opens its own private half (the AAD binds it to the kid).
      const es256 = material.keys.find((k) => k.publicJwk.alg === 'ES256')!
      expect((await es256.openPrivate()).x).toBe(es256.publicJwk.x as string)
      // Its cookie keys are its own (sealed under its instance id).
      expect(material.cookieKeys().length).toBeGreaterThan(0)
    }
    expect(new Set(loaded.slice(0, 3).map((m) => m!.keys[0]!.publicJwk.kid)).size).toBe(3)
  })
})
