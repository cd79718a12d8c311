// legs: once — unit test; no store
import { describe, expect, it } from 'bun:test'
import { generateKeyPairSync, type KeyObject } from 'node:crypto'
import { compactVerify, importJWK } from 'jose'
import { ExternalSigningKey } from 'oidc-provider'
import { InstanceSigningKey } from './signing-keys'

type Jwk = Record<string, string>

const privateJwkOf = (alg: 'ES256' | 'RS256', kid: string): Jwk => {
  const { privateKey } =
    alg === 'RS256'
      ? generateKeyPairSync('rsa', { modulusLength: 2048 })
      : generateKeyPairSync('ec', { namedCurve: 'P-256' })
  return { ...privateKey.export({ format: 'jwk' }), alg, kid, use: 'sig' } as unknown as Jwk
}

const PUBLIC = ['kty', 'crv', 'x', 'y', 'n', 'e', 'kid', 'alg', 'use']

/** A key as loadInstanceKeys gives it: the public JWK, and the private one behind an opener that counts. */
function loaded(privateJwk: Jwk, publicOverride: Jwk = {}) {
  const publicJwk = {
    ...Object.fromEntries(PUBLIC.filter((m) => m in privateJwk).map((m) => [m, privateJwk[m]])),
    ...publicOverride,
  }
  const opened = { count: 0 }
  const openPrivate = async () => {
    opened.count++
    return { ...privateJwk }
  }
  return { key: { publicJwk, openPrivate }, opened }
}

/** A JWS made as oidc-provider makes it with an ExternalSigningKey (lib/helpers/jwt.js). */
async function jwsOf(key: InstanceSigningKey, alg: string) {
  const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url')
  const input = `${b64({ alg, kid: key.kid })}.${b64({ sub: 'someone', n: 1 })}`
  const signature = await key.sign(Buffer.from(input))
  return `${input}.${Buffer.from(signature).toString('base64url')}`
}

describe('an instance signing key', () => {
  for (const alg of ['ES256', 'RS256'] as const) {
    it(`signs ${alg} JWS that verify under its public JWK, and lists only public members`, async () => {
      const jwk = privateJwkOf(alg, `k-${alg}`)
      const { key: material, opened } = loaded(jwk)
      const key = new InstanceSigningKey(material)
      expect(key).toBeInstanceOf(ExternalSigningKey)
      const listed = {
        kty: key.kty,
        kid: key.kid,
        alg: key.alg,
        use: key.use,
        crv: key.crv,
        x: key.x,
        y: key.y,
        n: key.n,
        e: key.e,
      }
      const expected =
        alg === 'RS256'
          ? { kty: 'RSA', kid: `k-${alg}`, alg, use: 'sig', n: jwk.n, e: jwk.e }
          : { kty: 'EC', kid: `k-${alg}`, alg, use: 'sig', crv: 'P-256', x: jwk.x, y: jwk.y }
      expect(Object.fromEntries(Object.entries(listed).filter(([, v]) => v !== undefined))).toEqual(expected)
      expect(JSON.stringify(listed)).not.toContain(String(jwk.d))
      // Listed and verifiable without opening the private key: that waits for the first signature.
      key.keyObject()
      expect(opened.count).toBe(0)
      const publicKey = await importJWK(expected, alg)
      for (let i = 0; i < 3; i++) {
        const verified = await compactVerify(await jwsOf(key, alg), publicKey)
        expect(JSON.parse(new TextDecoder().decode(verified.payload))).toEqual({ sub: 'someone', n: 1 })
      }
      expect(opened.count).toBe(1)
      // Another key's signature does not verify under this one.
      const other = new InstanceSigningKey(loaded(privateJwkOf(alg, 'other')).key)
      await expect(compactVerify(await jwsOf(other, alg), publicKey)).rejects.toThrow()
    })
  }

  it('hands oidc-provider its public key to verify with, never the private one', async () => {
    const key = new InstanceSigningKey(loaded(privateJwkOf('ES256', 'k')).key)
    const publicKey = key.keyObject() as KeyObject
    expect(publicKey.type).toBe('public')
    expect(key.keyObject()).toBe(publicKey)
    const verified = await compactVerify(await jwsOf(key, 'ES256'), publicKey)
    expect(verified.protectedHeader.kid).toBe('k')
  })

  it('refuses a key without a kid or of an algorithm the instances do not sign with', () => {
    const without = loaded(privateJwkOf('ES256', 'k')).key
    delete without.publicJwk.kid
    expect(() => new InstanceSigningKey(without)).toThrow()
    expect(() => new InstanceSigningKey(loaded(privateJwkOf('ES256', 'k'), { alg: 'ES384' }).key)).toThrow()
    expect(() => new InstanceSigningKey(loaded(privateJwkOf('RS256', 'k'), { alg: 'none' }).key)).toThrow()
  })

  it('fails the signature, not the process, on private material that makes no key', async () => {
    const key = new InstanceSigningKey(loaded({ ...privateJwkOf('ES256', 'k'), d: 'AAAA' }).key)
    const signing = key.sign(Buffer.from('a.b'))
    expect(signing).toBeInstanceOf(Promise)
    await expect(signing).rejects.toThrow()
    // A private key that cannot be opened (another master key, a tampered column) fails the same way.
    const sealedAway = new InstanceSigningKey({
      publicJwk: loaded(privateJwkOf('ES256', 'k')).key.publicJwk,
      openPrivate: async () => {
        throw new Error('unsupported state or unable to authenticate data')
      },
    })
    await expect(sealedAway.sign(Buffer.from('a.b'))).rejects.toThrow('unable to authenticate')
  })

  it('reads and opens its private key once for the signatures that come together, and again after a failure', async () => {
    const jwk = privateJwkOf('ES256', 'k')
    const { key: material, opened } = loaded(jwk)
    const together = new InstanceSigningKey(material)
    const publicKey = await importJWK({ kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y }, 'ES256')
    const signed = await Promise.all(Array.from({ length: 5 }, () => jwsOf(together, 'ES256')))
    for (const jws of signed) await compactVerify(jws, publicKey)
    expect(opened.count).toBe(1)
    // The store unreachable at the first signature: that one fails, the next reads again.
    let calls = 0
    const flaky = new InstanceSigningKey({
      publicJwk: material.publicJwk,
      openPrivate: async () => {
        if (++calls === 1) throw new Error('the store is unreachable')
        return { ...jwk }
      },
    })
    await expect(flaky.sign(Buffer.from('a.b'))).rejects.toThrow('unreachable')
    await compactVerify(await jwsOf(flaky, 'ES256'), publicKey)
    await compactVerify(await jwsOf(flaky, 'ES256'), publicKey)
    expect(calls).toBe(2)
  })

  it('refuses to sign with a private key that is not the half of the public key it lists', async () => {
    const jwk = privateJwkOf('ES256', 'k')
    const other = privateJwkOf('ES256', 'k')
    // The stored public JWK names another key: the jwks endpoint would list a key that never signs.
    const swapped = new InstanceSigningKey(loaded(jwk, { x: String(other.x), y: String(other.y) }).key)
    await expect(swapped.sign(Buffer.from('a.b'))).rejects.toThrow('differs from its public one')
    const renamed = new InstanceSigningKey(loaded({ ...jwk, kid: 'another' }, { kid: 'k' }).key)
    await expect(renamed.sign(Buffer.from('a.b'))).rejects.toThrow('differs from its public one (kid)')
  })
})
