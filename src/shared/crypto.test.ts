// legs: once — unit test; no store
import { describe, expect, it } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { hexBytes, SecretBox, safeEqual, sha256Hex, sha256Matches } from './crypto'

const box = new SecretBox(randomBytes(32))

describe('SecretBox (AES-256-GCM at rest)', () => {
  it('round-trips and never stores the plaintext', () => {
    const sealed = box.seal('smtp-password-123', 'smtp:ws1')
    expect(sealed).toStartWith('v1.')
    expect(sealed).not.toContain('smtp-password-123')
    expect(box.open(sealed, 'smtp:ws1')).toBe('smtp-password-123')
  })

  it('uses a fresh IV each time', () => {
    expect(box.seal('same')).not.toBe(box.seal('same'))
  })

  it('refuses a value moved to another context', () => {
    const sealed = box.seal('secret', 'smtp:ws1')
    expect(() => box.open(sealed, 'smtp:ws2')).toThrow()
  })

  it('refuses a tampered value and a wrong key', () => {
    const sealed = box.seal('secret')
    const parts = sealed.split('.')
    const body = Buffer.from(parts[2]!, 'base64url')
    body[0] = body[0]! ^ 1
    expect(() => box.open(`${parts[0]}.${parts[1]}.${body.toString('base64url')}`)).toThrow()
    expect(() => new SecretBox(randomBytes(32)).open(sealed)).toThrow()
  })
})

describe('hashing and comparison', () => {
  it('compares equal and unequal strings of any length', () => {
    expect(safeEqual('abc', 'abc')).toBe(true)
    expect(safeEqual('abc', 'abd')).toBe(false)
    expect(safeEqual('abc', 'abcd')).toBe(false)
  })

  it('hashes with SHA-256 hex', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  })

  it("checks a value against a stored digest's bytes, and a stored value that is no digest matches nothing", () => {
    const stored = hexBytes(sha256Hex('the secret'))
    expect(sha256Matches('the secret', stored)).toBe(true)
    expect(sha256Matches('the secret ', stored)).toBe(false)
    expect(sha256Matches('', stored)).toBe(false)
    // A non-hex or cut stored value decodes to fewer than 32 bytes.
    expect(sha256Matches('the secret', hexBytes(sha256Hex('the secret').slice(0, 62)))).toBe(false)
    expect(sha256Matches('the secret', hexBytes(`zz${sha256Hex('the secret').slice(2)}`))).toBe(false)
    expect(sha256Matches('', hexBytes(''))).toBe(false)
  })
})
