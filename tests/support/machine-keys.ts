import { importPKCS8, SignJWT } from 'jose'

/** RFC 7523 §2.1: the grant type of the exchange. */
export const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer'

/** A machine key's key file, as its creation (or rotation) answers it once. */
export interface KeyFile {
  type: string
  key_id: string
  key_secret: string
  workspace_id: string
  token_url: string
}

/**
 * An assertion signed with the key file as a key holder makes one (DESIGN "Machine keys"): `iss` =
 * `sub` = the key id, `aud` = its token URL, five minutes, a fresh `jti`. `claims` override these;
 * `nowMs` is the holder's clock (the server's ManualClock in tests that turn it); `key` signs
 * instead of the file's own (a forgery).
 */
export async function signAssertion(
  file: KeyFile,
  opts: { claims?: Record<string, unknown>; nowMs?: number; key?: CryptoKey } = {},
): Promise<string> {
  const now = Math.floor((opts.nowMs ?? Date.now()) / 1000)
  return new SignJWT({
    iss: file.key_id,
    sub: file.key_id,
    aud: file.token_url,
    iat: now,
    exp: now + 300,
    jti: crypto.randomUUID(),
    ...opts.claims,
  })
    .setProtectedHeader({ alg: 'ES256', kid: file.key_id })
    .sign(opts.key ?? (await importPKCS8(file.key_secret, 'ES256')))
}

/** The form of the exchange (`grant_type`, `assertion` and any more fields), posted as RFC 6749 asks. */
export const exchangeForm = (assertion: string, more: Record<string, string> = {}) =>
  new URLSearchParams({ grant_type: JWT_BEARER, assertion, ...more })
