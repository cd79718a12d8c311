// Machine keys for the scenarios: a key created through the product's own API with the owner's
// dashboard session (so it is exactly what a workspace admin gets: row, audit entry, key file), the
// RFC 7523 jwt-bearer exchange at its token_url, and pools of assertions signed ahead of a load.
// Every exchange spends an assertion (its jti is single use), and signing ES256 in the process that
// drives the load would take CPU from the two cores the server runs on: a pool is signed before the
// window it is spent in, sized from the rate the last load reached.
import { exportJWK, exportPKCS8, generateKeyPair, importPKCS8, SignJWT } from 'jose'
import { JWT_BEARER } from '../../src/features/machine-keys/exchange'
import type { MachineKeyModel } from '../../src/features/machine-keys/model'
import { newId } from '../../src/shared/ids'
import type { BenchSession } from './setup'

/** What a holder needs of the key file to sign and exchange an assertion. */
export type KeyFile = Pick<typeof MachineKeyModel.keyFile.static, 'key_id' | 'key_secret' | 'token_url'>

/** The longest an assertion may live (DESIGN "Machine keys": exp - iat <= 3600). */
const ASSERTION_LIFETIME_S = 3600

/**
 * Creates a machine key with `scopes` in `workspaceId` as `session`'s account (the workspace's
 * owner): POST /v1/workspaces/{id}/machine-keys, and returns its key file.
 */
export async function createMachineKey(
  origin: string,
  session: BenchSession,
  workspaceId: string,
  scopes: string[],
): Promise<KeyFile> {
  const url = `${origin}/v1/workspaces/${workspaceId}/machine-keys`
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      cookie: session.cookie,
      'x-csrf-token': session.csrfToken,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ name: 'bench', scopes }),
  })
  const body = await res.text()
  if (res.status !== 201) throw new Error(`POST ${url} answered ${res.status}: ${body.slice(0, 300)}`)
  return (JSON.parse(body) as { key: KeyFile }).key
}

/**
 * A key pair as the product makes one, for a server that is not Gatehouse: its id (mk_ + ULID), the
 * public JWK to give that server, and the file of a key exchanged at `tokenUrl`.
 */
export async function holderKey(): Promise<{
  keyId: string
  publicJwk: string
  file: (tokenUrl: string) => KeyFile
}> {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true })
  const keyId = newId('mk')
  const secret = await exportPKCS8(privateKey)
  return {
    keyId,
    publicJwk: JSON.stringify(await exportJWK(publicKey)),
    file: (tokenUrl) => ({ key_id: keyId, key_secret: secret, token_url: tokenUrl }),
  }
}

/** A fresh assertion as the key's holder signs one: iss = sub = key id, aud = token_url, an hour long. */
function signAssertion(file: KeyFile, key: CryptoKey): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  return new SignJWT()
    .setProtectedHeader({ alg: 'ES256', kid: file.key_id })
    .setIssuer(file.key_id)
    .setSubject(file.key_id)
    .setAudience(file.token_url)
    .setIssuedAt(now)
    .setExpirationTime(now + ASSERTION_LIFETIME_S)
    .setJti(crypto.randomUUID())
    .sign(key)
}

const importKey = async (file: KeyFile) => (await importPKCS8(file.key_secret, 'ES256')) as CryptoKey

/** The form body of an exchange of `assertion` (a JWT is form-safe: base64url and dots). */
const exchangeBody = (assertion: string) =>
  `grant_type=${encodeURIComponent(JWT_BEARER)}&assertion=${assertion}`

/** POST of `assertion` to the key file's token_url, form-encoded as RFC 6749 §3.2 asks. */
export const exchangeRequest = (file: KeyFile, assertion: string) =>
  new Request(file.token_url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: exchangeBody(assertion),
  })

/** One exchange: the status and the parsed body. */
export async function exchangeOnce(file: KeyFile, assertion: string) {
  const res = await fetch(exchangeRequest(file, assertion))
  const text = await res.text()
  return { status: res.status, text, body: JSON.parse(text) as Record<string, unknown> }
}

/** An access token of the key: one assertion signed and exchanged. */
export async function machineToken(file: KeyFile): Promise<string> {
  const { status, text, body } = await exchangeOnce(file, await signAssertion(file, await importKey(file)))
  if (status !== 200 || typeof body.access_token !== 'string')
    throw new Error(`${file.token_url} answered ${status}: ${text.slice(0, 300)}`)
  return body.access_token
}

/**
 * Assertions of one key, each with a jti of its own, signed ahead of the load that spends them:
 * `ready(seconds)` before each load (outside its measured window) tops the pool up for that many
 * seconds at the highest rate a load of this pool reached (at least `minRate`), times `headroom`;
 * `take()` during the load. A pool that runs dry throws, which the load counts as an error.
 */
export class AssertionPool {
  private queue: string[] = []
  private next = 0
  private rate = 0
  /** When the pool was last made ready, and how many assertions were left then. */
  private since: { at: number; left: number } | null = null

  private constructor(
    readonly file: KeyFile,
    private readonly key: CryptoKey,
    private readonly opts: { minRate: number; headroom: number },
  ) {}

  static async of(file: KeyFile, opts: { minRate: number; headroom: number }): Promise<AssertionPool> {
    return new AssertionPool(file, await importKey(file), opts)
  }

  /** Assertions not spent yet. */
  get size(): number {
    return this.queue.length - this.next
  }

  /** The highest rate a load of this pool reached so far, per second. */
  get observedRate(): number {
    return this.rate
  }

  /** A fresh assertion, not from the pool. */
  sign(): Promise<string> {
    return signAssertion(this.file, this.key)
  }

  /** The next unspent assertion. */
  take(): string {
    const assertion = this.queue[this.next]
    if (assertion === undefined)
      throw new Error(`the assertion pool ran dry (${this.queue.length} signed ahead)`)
    this.next++
    return assertion
  }

  /** Tops the pool up for a load of `seconds` (see the class). */
  async ready(seconds: number): Promise<void> {
    if (this.since) {
      const spent = this.since.left - this.size
      this.rate = Math.max(this.rate, spent / ((performance.now() - this.since.at) / 1000))
    }
    const want = Math.ceil(seconds * Math.max(this.opts.minRate, this.rate) * this.opts.headroom)
    this.queue = this.queue.slice(this.next)
    this.next = 0
    // In batches of concurrent signs: Bun runs WebCrypto off the main thread, so a batch uses every core.
    const BATCH = 256
    while (this.queue.length < want) {
      const n = Math.min(BATCH, want - this.queue.length)
      this.queue.push(...(await Promise.all(Array.from({ length: n }, () => this.sign()))))
    }
    this.since = { at: performance.now(), left: this.size }
  }
}
