// legs: once — reads oidc-provider's package and a Provider in memory; no store is opened
import { describe, expect, it } from 'bun:test'
import { generateKeyPairSync } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import Provider from 'oidc-provider'
import weakCache from 'oidc-provider/lib/helpers/weak_cache.js'
import { current, serving } from './instance-scope'
import { INTERNALS, keyStoreOf, type PerIssuer, shareProvider, VERIFIED_OIDC_PROVIDER } from './internals'

// The shared Provider's reach into oidc-provider (internals.ts): the version it was verified
// against, the shape of each internal on a Provider as constructed, and each redirect answering the
// served instance. What the instances then serve is tests/instance-isolation.test.ts's.

const root = join(import.meta.dir, '../../..')

/** A Provider constructed as buildProvider constructs it, minus what needs a store. */
function bareProvider(): Provider {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const jwk = { ...privateKey.export({ format: 'jwk' }), alg: 'ES256', use: 'sig', kid: 'template' }
  return new Provider('http://127.0.0.1/i/00000000-0000-4000-8000-000000000000', {
    jwks: { keys: [jwk] },
    cookies: { keys: ['template'], long: { path: '/' } },
    features: { devInteractions: { enabled: false } },
  })
}

/** A served instance of its own: every field distinct from the template's and the other's. */
function perIssuer(name: string): PerIssuer {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const jwk = { ...privateKey.export({ format: 'jwk' }), alg: 'ES256', use: 'sig', kid: name }
  const slot = () => ({ get: () => name, set: () => {} })
  return {
    issuer: `http://127.0.0.1/i/${name}`,
    prefix: `/i/${name}`,
    keystore: keyStoreOf([jwk]),
    jwks: { keys: [{ kid: name }] },
    cookieKeys: () => [`cookie key of ${name}`],
    clientObjects: slot(),
    findClient: { remembered: slot() },
  }
}

describe('the installed oidc-provider', () => {
  it('is the version the shared Provider was verified against', () => {
    const installed = JSON.parse(readFileSync(join(root, 'node_modules/oidc-provider/package.json'), 'utf8'))
    expect(
      installed.version,
      `oidc-provider ${installed.version} is installed; the shared Provider's reach into it was verified ` +
        `against ${VERIFIED_OIDC_PROVIDER}. Re-verify EACH internal listed in src/identity/provider/internals.ts ` +
        `(${INTERNALS.map((i) => i.name).join(', ')}): read where it is read, check it is still read per ` +
        'call, then set VERIFIED_OIDC_PROVIDER.',
    ).toBe(VERIFIED_OIDC_PROVIDER)
  })

  it('is pinned exactly in package.json', () => {
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
    expect(manifest.dependencies['oidc-provider']).toBe(VERIFIED_OIDC_PROVIDER)
  })
})

describe('each internal reached has the shape relied on', () => {
  const provider = bareProvider()
  for (const internal of INTERNALS)
    it(internal.name, () => {
      expect(internal.holds(provider), `${internal.name}: ${internal.breaks}`).toBe(true)
    })
})

describe('each redirect answers the served instance', () => {
  const provider = bareProvider()
  shareProvider(provider, current)
  const int = weakCache(provider)
  const A = perIssuer('a')
  const B = perIssuer('b')
  /** What the Provider reads of each redirected state, in `instance`'s scope. */
  const reads = (instance: PerIssuer) =>
    serving(instance as never, () => ({
      issuer: provider.issuer,
      keys: (provider as unknown as { keys: string[] }).keys,
      keystore: int.keystore,
      jwks: int.jwks,
      dynamicClients: int.dynamicClients,
      staticClients: int.staticClients,
      cookiePath: int.configuration.cookies.long.path,
      urlFor: provider.urlFor('token'),
    }))

  it("reads A's in A's scope and B's in B's, for every redirected state", () => {
    const expected = (i: PerIssuer) => ({
      issuer: i.issuer,
      keys: i.cookieKeys(),
      keystore: i.keystore,
      jwks: i.jwks,
      dynamicClients: i.clientObjects,
      staticClients: i.findClient.remembered,
      cookiePath: i.prefix,
      urlFor: `${i.issuer}/token`,
    })
    expect(reads(A)).toEqual(expected(A))
    expect(reads(B)).toEqual(expected(B))
    expect(reads(A).keystore).toBe(A.keystore)
    expect(reads(B).dynamicClients).toBe(B.clientObjects)
  })

  it('reads nothing outside a served request, and drops writes', () => {
    expect(() => provider.issuer).toThrow('an identity instance was read outside a request for it')
    expect(() => int.keystore).toThrow('an identity instance was read outside a request for it')
    serving(A as never, () => {
      ;(provider as { issuer: string }).issuer = 'http://elsewhere.example'
      int.keystore = keyStoreOf([])
    })
    expect(reads(A).issuer).toBe(A.issuer)
    expect(reads(A).keystore).toBe(A.keystore)
  })

  it('refuses a Provider whose internals are not where it reads them', () => {
    const moved = bareProvider()
    weakCache(moved).staticClients = new Map()
    expect(() => shareProvider(moved, () => A)).toThrow(
      'oidc-provider changed: #int.staticClients is not what the shared Provider relies on',
    )
  })
})

describe('no other file reaches into oidc-provider', () => {
  it('imports its internal modules or patches its classes only in internals.ts', () => {
    const src = join(root, 'src')
    const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter(
      (f) => /\.tsx?$/.test(f) && !/\.(test|d)\.ts$/.test(f),
    )
    const reaching = files.filter((f) => {
      const text = readFileSync(join(src, f), 'utf8')
      return /oidc-provider\/lib\/|weak_cache|\.prototype\.compareClientSecret/.test(text)
    })
    expect(reaching.map((f) => relative(src, join(src, f)))).toEqual(['identity/provider/internals.ts'])
  })
})
