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
      const key = new InstanceSigningKey({ ...jwk })
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
      const publicKey = await importJWK(expected, alg)
      for (let i = 0; i < 3; i++) {
        const verified = await compactVerify(await jwsOf(key, alg), publicKey)
        expect(JSON.parse(new TextDecoder().decode(verified.payload))).toEqual({ sub: 'someone', n: 1 })
      }
      // Another key's signature does not verify under this one.
      const other = new InstanceSigningKey(privateJwkOf(alg, 'other'))
      await expect(compactVerify(await jwsOf(other, alg), publicKey)).rejects.toThrow()
    })
  }

  it('hands oidc-provider its public key to verify with, never the private one', async () => {
    const key = new InstanceSigningKey(privateJwkOf('ES256', 'k'))
    const publicKey = key.keyObject() as KeyObject
    expect(publicKey.type).toBe('public')
    expect(key.keyObject()).toBe(publicKey)
    const verified = await compactVerify(await jwsOf(key, 'ES256'), publicKey)
    expect(verified.protectedHeader.kid).toBe('k')
  })

  it('refuses a key without a kid or of an algorithm the instances do not sign with', () => {
    expect(() => new InstanceSigningKey({ ...privateJwkOf('ES256', 'k'), kid: undefined })).toThrow()
    expect(() => new InstanceSigningKey({ ...privateJwkOf('ES256', 'k'), alg: 'ES384' })).toThrow()
    expect(() => new InstanceSigningKey({ ...privateJwkOf('RS256', 'k'), alg: 'none' })).toThrow()
  })

  it('fails the signature, not the process, on private material that makes no key', async () => {
    const key = new InstanceSigningKey({ ...privateJwkOf('ES256', 'k'), d: 'AAAA' })
    const signing = key.sign(Buffer.from('a.b'))
    expect(signing).toBeInstanceOf(Promise)
    await expect(signing).rejects.toThrow()
  })
})
