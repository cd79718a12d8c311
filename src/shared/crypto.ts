import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  hash,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto'

const VERSION = 'v1'

/**
 * Secrets that must be used again later (SMTP passwords, IdP client secrets, webhook signing
 * secrets, private keys) are sealed with AES-256-GCM under the master key. Format:
 * `v1.<base64url iv>.<base64url ciphertext+tag>`. The optional `context` is bound as AAD so a
 * sealed value cannot be moved to another column or row unnoticed.
 */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('the master key must be 32 bytes')
  }

  seal(plaintext: string, context = ''): string {
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', this.key, iv)
    cipher.setAAD(Buffer.from(context))
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()])
    return `${VERSION}.${iv.toString('base64url')}.${body.toString('base64url')}`
  }

  open(sealed: string, context = ''): string {
    const [version, ivPart, bodyPart] = sealed.split('.')
    if (version !== VERSION || !ivPart || !bodyPart) throw new Error('not a sealed secret')
    const body = Buffer.from(bodyPart, 'base64url')
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(ivPart, 'base64url'))
    decipher.setAAD(Buffer.from(context))
    decipher.setAuthTag(body.subarray(body.length - 16))
    return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString(
      'utf8',
    )
  }
}

/** Secrets that only need checking (client secrets, session ids) are stored as SHA-256. */
// One-shot: a third of createHash's cost, and it runs on every client authentication.
export const sha256Hex = (value: string): string => hash('sha256', value, 'hex')

/** The PKCE code challenge of a verifier (RFC 7636 §4.2, S256): what a relying party of ours sends. */
export const pkceS256 = (verifier: string): string => hash('sha256', verifier, 'base64url')

/**
 * A 32-byte subkey of the master key for one purpose (HKDF-SHA256, RFC 5869 §2), so no two uses
 * share a key and none needs one stored.
 */
export const deriveKey = (master: Buffer, purpose: string): Buffer =>
  Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `gatehouse ${purpose}`, 32))

/**
 * HMAC-SHA256 (RFC 2104) of `value`, base64url: the lookup key of a secret that is presented again
 * later. Unlike a plain digest it cannot be recomputed, or matched against guesses, without the key.
 */
export const keyedHash = (key: Buffer, value: string): string =>
  createHmac('sha256', key).update(value).digest('base64url')

/**
 * Whether `value`'s SHA-256 is `digest` (a stored `sha256Hex`, as bytes: `hexBytes`), compared in
 * constant time. No string is made per check: it runs on every client authentication.
 */
export function sha256Matches(value: string, digest: Uint8Array): boolean {
  const actual = hash('sha256', value, 'buffer')
  return actual.byteLength === digest.byteLength && timingSafeEqual(actual, digest)
}

/** The bytes of a stored hex digest; a value that is no hex digest gives bytes no digest matches. */
export const hexBytes = (hex: string): Uint8Array => Buffer.from(hex, 'hex')

/** Constant-time string comparison; unequal lengths compare a digest so timing stays flat. */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a)
  const bb = Buffer.from(b)
  if (ab.length !== bb.length) {
    timingSafeEqual(createHash('sha256').update(ab).digest(), createHash('sha256').update(bb).digest())
    return false
  }
  return timingSafeEqual(ab, bb)
}

/** A random token, base64url, `bytes` of entropy. */
export const randomToken = (bytes = 32): string => randomBytes(bytes).toString('base64url')
