import { createPrivateKey, createPublicKey, type KeyObject, sign } from 'node:crypto'
import { ExternalSigningKey } from 'oidc-provider'
import type { InstanceKey } from '../engine/keys'

/**
 * The algorithms an instance signs with (SIGNING_ALGS), as node:crypto's `sign` makes them. Always its
 * callback form, which signs on the crypto thread pool: signing ES256 on the event loop instead (13 µs)
 * cost the token path a fifth of its rate on two cores, where the other core signs meanwhile.
 */
const SIGN_OPTIONS: Record<string, { dsaEncoding?: 'ieee-p1363' }> = {
  // JWS wants ECDSA's r || s, not DER.
  ES256: { dsaEncoding: 'ieee-p1363' },
  RS256: {},
}

/** The members of a public JWK (what the jwks endpoint lists and a key is selected by). */
const PUBLIC_MEMBERS = ['kty', 'kid', 'alg', 'crv', 'x', 'y', 'n', 'e'] as const
type PublicMembers = Readonly<Record<(typeof PUBLIC_MEMBERS)[number], string | undefined>>

/**
 * One signing key of an instance in oidc-provider's keystore: oidc-provider hands it the JWS
 * signing input and takes the signature (its ExternalSigningKey, the experiment the configuration
 * acknowledges), so JWT access tokens and ID tokens are signed by a node:crypto KeyObject instead of
 * through jose's WebCrypto. On Bun an ES256 signature then costs ~19 µs of CPU instead of ~24–40
 * (both off the event loop): the token path's rate rose by 6–11%, alternated with the code before.
 * The private key is opened (its sealed column) and imported on its first signature: an instance
 * that never signs RS256 (one that only issues client-credentials tokens) never opens that key, and
 * loading an instance decrypts nothing.
 */
export class InstanceSigningKey extends ExternalSigningKey {
  /** The public members, read by the keystore's selection and the jwks endpoint. */
  readonly #public: PublicMembers
  readonly #options: { dsaEncoding?: 'ieee-p1363' }
  /** Reads and opens the private JWK, until the first signature made the key of it. */
  #openPrivate: InstanceKey['openPrivate'] | null
  /** The first signature's making of the key, which the signatures meanwhile wait for. */
  #making: Promise<KeyObject> | null = null
  #privateKey: KeyObject | null = null
  #publicKey: KeyObject | null = null

  constructor({ publicJwk, openPrivate }: InstanceKey) {
    super()
    const options = SIGN_OPTIONS[String(publicJwk.alg)]
    if (!options || typeof publicJwk.kid !== 'string' || !publicJwk.kid)
      throw new Error(`a signing key needs a kid and one of ${Object.keys(SIGN_OPTIONS).join(', ')}`)
    const members = Object.fromEntries(
      PUBLIC_MEMBERS.map((m) => [m, typeof publicJwk[m] === 'string' ? publicJwk[m] : undefined]),
    )
    this.#public = members as PublicMembers
    this.#options = options
    this.#openPrivate = openPrivate
  }

  /**
   * The private key, made on first use from the opened JWK, which must be the private half of the
   * public one listed (same kid, alg and public members): the jwks endpoint never lists a key other
   * than the one that signs. A failed making (the store unreachable) is tried again by the next
   * signature.
   */
  #signingKey(): Promise<KeyObject> {
    this.#making ??= this.#make().finally(() => {
      this.#making = null
    })
    return this.#making
  }

  async #make(): Promise<KeyObject> {
    const jwk = await (this.#openPrivate as InstanceKey['openPrivate'])()
    for (const m of PUBLIC_MEMBERS)
      if ((typeof jwk[m] === 'string' ? jwk[m] : undefined) !== this.#public[m])
        throw new Error(`signing key ${this.#public.kid}: its private JWK differs from its public one (${m})`)
    this.#privateKey = createPrivateKey({ key: jwk as never, format: 'jwk' })
    this.#openPrivate = null
    return this.#privateKey
  }

  override get kty(): string {
    return this.#public.kty ?? ''
  }
  override get kid(): string | undefined {
    return this.#public.kid
  }
  override get alg(): string | undefined {
    return this.#public.alg
  }
  override get crv(): string | undefined {
    return this.#public.crv
  }
  override get x(): string | undefined {
    return this.#public.x
  }
  override get y(): string | undefined {
    return this.#public.y
  }
  override get n(): string | undefined {
    return this.#public.n
  }
  override get e(): string | undefined {
    return this.#public.e
  }

  /** The public key: what oidc-provider verifies its own JWTs with (an ID token hint). */
  override keyObject(): KeyObject {
    if (!this.#publicKey) {
      const jwk = Object.fromEntries(Object.entries(this.#public).filter(([, v]) => v !== undefined))
      this.#publicKey = createPublicKey({ key: jwk as never, format: 'jwk' })
    }
    return this.#publicKey
  }

  override sign(data: Uint8Array): Promise<Uint8Array> {
    const privateKey = this.#privateKey
    if (privateKey) return this.#signWith(privateKey, data)
    return this.#signingKey().then((made) => this.#signWith(made, data))
  }

  #signWith(privateKey: KeyObject, data: Uint8Array): Promise<Uint8Array> {
    return new Promise((resolve, reject) => {
      sign('sha256', data, { key: privateKey, ...this.#options }, (e, signature) =>
        e ? reject(e) : resolve(signature),
      )
    })
  }
}
