import { readFileSync } from 'node:fs'
import { importPKCS8, SignJWT } from 'jose'
import type { TokenSource } from './api'

/** RFC 7523 §2.1: the grant type of the exchange. */
export const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer'

/** A machine key's key file, as its creation (or rotation) answered it once (DESIGN "Machine keys"). */
export interface KeyFile {
  type: 'service_account'
  key_id: string
  key_secret: string
  workspace_id: string
  token_url: string
}

/** The key file could not be used: its path and why, in words an operator acts on. */
export class KeyFileError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`machine key ${path}: ${reason}`)
  }
}

/** Reads and checks a key file; KeyFileError names what is wrong with it. */
function readKeyFile(path: string): KeyFile {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (e) {
    const code = (e as { code?: string }).code
    throw new KeyFileError(
      path,
      code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'not readable (permission denied)' : String(e),
    )
  }
  let file: Partial<KeyFile>
  try {
    file = JSON.parse(text)
  } catch {
    throw new KeyFileError(path, 'not JSON (expected the key file a key creation answered)')
  }
  for (const field of ['key_id', 'key_secret', 'workspace_id', 'token_url'] as const)
    if (typeof file[field] !== 'string' || !file[field])
      throw new KeyFileError(path, `missing "${field}" (expected the key file a key creation answered)`)
  if (file.type !== 'service_account') throw new KeyFileError(path, `type is not "service_account"`)
  return file as KeyFile
}

export interface MachineKeyAuthOptions {
  /** The system clock unless a test turns its own (milliseconds). */
  now?: () => number
  /** Exchange again this long before the token expires (default 60 s). */
  refreshBeforeMs?: number
  fetch?: typeof fetch
}

/**
 * A machine key's session (SPEC "Authentication" 3): the key file is read and exchanged for a
 * 15-minute access token (RFC 7523 jwt-bearer at the file's token_url) on first use, and exchanged
 * again before that token expires. An assertion lives one minute and is used once (`jti`).
 */
export class MachineKeyAuth implements TokenSource {
  readonly file: KeyFile
  private current: { token: string; expiresAt: number; scope: string } | null = null
  private pending: Promise<string> | null = null
  private readonly now: () => number

  constructor(
    readonly path: string,
    private readonly opts: MachineKeyAuthOptions = {},
  ) {
    this.file = readKeyFile(path)
    this.now = opts.now ?? Date.now
  }

  describe(): string {
    return `machine key ${this.file.key_id} (${this.path})`
  }

  /** The scopes the last exchange granted (space-separated), once exchanged. */
  get scope(): string | null {
    return this.current?.scope ?? null
  }

  /** When the current token expires (ms), once exchanged. */
  get expiresAt(): number | null {
    return this.current?.expiresAt ?? null
  }

  async token(): Promise<string> {
    const refreshBefore = this.opts.refreshBeforeMs ?? 60_000
    if (this.current && this.current.expiresAt - refreshBefore > this.now()) return this.current.token
    // Calls at once share one exchange.
    this.pending ??= this.exchange().finally(() => {
      this.pending = null
    })
    return this.pending
  }

  /** Exchanges the key now (at connect, and before expiry); KeyFileError says why it was refused. */
  async exchange(): Promise<string> {
    const { file } = this
    let key: CryptoKey
    try {
      key = await importPKCS8(file.key_secret, 'ES256')
    } catch {
      throw new KeyFileError(this.path, 'key_secret is not an ES256 (P-256) PKCS#8 private key')
    }
    const iat = Math.floor(this.now() / 1000)
    const assertion = await new SignJWT({ jti: crypto.randomUUID() })
      .setProtectedHeader({ alg: 'ES256', kid: file.key_id })
      .setIssuer(file.key_id)
      .setSubject(file.key_id)
      .setAudience(file.token_url)
      .setIssuedAt(iat)
      .setExpirationTime(iat + 60)
      .sign(key)
    let res: Response
    try {
      res = await (this.opts.fetch ?? fetch)(file.token_url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({ grant_type: JWT_BEARER, assertion }),
        signal: AbortSignal.timeout(10_000),
      })
    } catch (e) {
      throw new KeyFileError(this.path, `cannot reach ${file.token_url}: ${(e as Error).message}`)
    }
    const body = (await res.json().catch(() => ({}))) as {
      access_token?: string
      expires_in?: number
      scope?: string
      error?: string
      error_description?: string
    }
    if (!res.ok || !body.access_token) {
      // RFC 6749 §5.2: the server says why (revoked, expired, unknown key).
      const why = body.error_description ?? body.error ?? `HTTP ${res.status}`
      throw new KeyFileError(this.path, `the exchange was refused: ${why}`)
    }
    this.current = {
      token: body.access_token,
      expiresAt: this.now() + (body.expires_in ?? 900) * 1000,
      scope: body.scope ?? '',
    }
    return body.access_token
  }
}
