import { decodeProtectedHeader, importJWK, type JWK, jwtVerify } from 'jose'
import { LRUCache } from 'lru-cache'
import { grantsScope } from '../../access/scopes'
import type { Core } from '../../core'
import { createMachineTokenIssuer } from '../../identity'
import { isoTime } from '../../shared/clock'
import { appError, defineErrorCodes } from '../../shared/errors'
import { SCOPE_PATTERN } from './model'
import { keyRow, keyStatus, type MachineKey, tokenUrl } from './service'

/** RFC 7523 §2.1: the grant type of a JWT used as an authorization grant. */
export const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer'
/** SPEC "Other constants": an access token from a machine key lives 15 minutes. */
const MACHINE_TOKEN_TTL_S = 900
/** DESIGN "Machine keys": an assertion may be valid for at most an hour. */
const MAX_ASSERTION_LIFETIME_S = 3600
/** Leeway for the holder's clock (RFC 7523 §3 items 4 and 5 allow "some small leeway"). */
const CLOCK_SKEW_S = 60
/** `last_used_at` moves at most once a minute: a busy key does not write its row on every exchange. */
const LAST_USED_STEP_MS = 60_000
const KEY_ID = /^mk_[0-9A-HJKMNP-TV-Z]{26}$/
const VALID_SCOPE = new RegExp(SCOPE_PATTERN)
const MAX_SCOPES = 20
/** Spent assertion ids are kept this long past their `exp` (and its leeway): a node whose clock runs behind the purging node's still finds them. */
const JTI_KEPT_MS = 5 * 60_000

/**
 * The exchange's refusals, by RFC 6749 §5.2's `error` codes (the code in lower case is the `error`
 * the route answers; the message its `error_description`).
 */
export const ExchangeErrors = defineErrorCodes({
  INVALID_REQUEST: 'The request is missing a parameter or is malformed',
  UNSUPPORTED_GRANT_TYPE: `Only grant_type=${JWT_BEARER} is supported here`,
  INVALID_GRANT: 'The assertion is not valid',
  INVALID_SCOPE: 'The requested scope is not held by this key',
})

const invalidGrant = (message: string) => appError(ExchangeErrors.INVALID_GRANT, 400, { message })

/** Why a key that signed a valid assertion may not have a token, or null when it may. */
function refusal(key: MachineKey, now: number): string | null {
  if (key.revokedAt !== null && key.revokedReason === 'deleted')
    return `This key was revoked at ${isoTime(key.revokedAt)}`
  if (keyStatus(key, now) === 'revoked')
    return `This key was rotated out at ${isoTime(key.revokesAt ?? key.revokedAt ?? now)}; use its replacement${key.replacedBy ? ` ${key.replacedBy}` : ''}`
  if (key.expiresAt !== null && key.expiresAt <= now) return `This key expired at ${isoTime(key.expiresAt)}`
  return null
}

interface MachineToken {
  access_token: string
  token_type: 'Bearer'
  expires_in: number
  scope: string
}

/**
 * The jwt-bearer exchange (RFC 7523 §2.1, DESIGN "Machine keys"): a key's signed assertion for a
 * 15-minute access token with the key's scopes or a subset asked for. The signature is checked
 * before anything about the key is told, so only its holder learns that it was revoked or expired.
 */
export function createKeyExchange(core: Core) {
  const issue = createMachineTokenIssuer(core)
  const audience = tokenUrl(core)
  // A key's public half never changes: imported once per process, by id and key.
  const imported = new LRUCache<string, CryptoKey | Uint8Array>({ max: 2000 })
  const publicKey = async (key: MachineKey) => {
    const cacheKey = `${key.id}:${key.publicJwk}`
    let found = imported.get(cacheKey)
    if (!found) {
      found = await importJWK(JSON.parse(key.publicJwk) as JWK, 'ES256')
      imported.set(cacheKey, found)
    }
    return found
  }

  /** The key an assertion names in its header, and that assertion verified against it. */
  async function verifiedAssertion(assertion: string, now: number) {
    let kid: unknown
    let alg: unknown
    try {
      ;({ kid, alg } = decodeProtectedHeader(assertion))
    } catch {
      throw invalidGrant('The assertion is not a JWT')
    }
    if (alg !== 'ES256') throw invalidGrant('The assertion must be signed with ES256')
    if (typeof kid !== 'string' || !KEY_ID.test(kid))
      throw invalidGrant('The assertion needs the key id as `kid`')
    const key = await keyRow(core.store, kid)
    if (!key) throw invalidGrant('Unknown key')
    try {
      const { payload } = await jwtVerify(assertion, await publicKey(key), {
        algorithms: ['ES256'],
        issuer: key.id,
        subject: key.id,
        audience,
        requiredClaims: ['exp', 'iat', 'jti'],
        currentDate: new Date(now),
        clockTolerance: CLOCK_SKEW_S,
      })
      return { key, payload: payload as { exp: number; iat: number; jti: unknown } }
    } catch (e) {
      const reason = (e as { code?: string; claim?: string }).claim
      throw invalidGrant(
        reason
          ? `The assertion's ${reason} claim is not valid`
          : 'The assertion signature or claims are not valid',
      )
    }
  }

  return async function exchange(form: Record<string, unknown>): Promise<MachineToken> {
    if (form.grant_type !== JWT_BEARER) {
      if (typeof form.grant_type !== 'string')
        throw appError(ExchangeErrors.INVALID_REQUEST, 400, { message: 'grant_type is missing' })
      throw appError(ExchangeErrors.UNSUPPORTED_GRANT_TYPE, 400)
    }
    const { assertion, scope } = form
    if (typeof assertion !== 'string' || !assertion || assertion.length > 8192)
      throw appError(ExchangeErrors.INVALID_REQUEST, 400, { message: 'assertion is missing or too long' })
    if (scope !== undefined && typeof scope !== 'string')
      throw appError(ExchangeErrors.INVALID_REQUEST, 400, {
        message: 'scope must be one space-separated string',
      })
    const now = core.clock.now()
    const { key, payload } = await verifiedAssertion(assertion, now)
    const nowS = Math.floor(now / 1000)
    if (payload.exp - payload.iat > MAX_ASSERTION_LIFETIME_S)
      throw invalidGrant('The assertion may be valid for at most one hour (exp - iat <= 3600)')
    if (payload.iat > nowS + CLOCK_SKEW_S) throw invalidGrant('The assertion was issued in the future (iat)')
    if (typeof payload.jti !== 'string' || !payload.jti || payload.jti.length > 200)
      throw invalidGrant('The assertion needs a jti of at most 200 characters')
    const refused = refusal(key, now)
    if (refused) throw invalidGrant(refused)

    const asked = scope?.split(' ').filter(Boolean) ?? []
    if (asked.length > MAX_SCOPES || asked.some((s) => !VALID_SCOPE.test(s)))
      throw appError(ExchangeErrors.INVALID_SCOPE, 400, {
        message: `scope is a space-separated list of at most ${MAX_SCOPES} scopes of this key`,
      })
    const notHeld = asked.find((s) => !grantsScope(key.scopes, s))
    if (notHeld !== undefined)
      throw appError(ExchangeErrors.INVALID_SCOPE, 400, { message: `This key does not hold ${notHeld}` })
    const scopes = asked.length ? [...new Set(asked)] : key.scopes

    // RFC 7523 §3 item 7: one use per jti, kept until the assertion could no longer be accepted.
    const spent = await core.store.exec(
      `INSERT INTO machine_key_assertions (key_id, jti, workspace_id, expires_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT DO NOTHING`,
      [key.id, payload.jti, key.workspaceId, (payload.exp + CLOCK_SKEW_S) * 1000 + JTI_KEPT_MS],
    )
    if (spent === 0)
      throw invalidGrant('This assertion was used already (jti); sign a new one for each exchange')
    if (key.lastUsedAt === null || key.lastUsedAt <= now - LAST_USED_STEP_MS)
      await core.store.exec(
        'UPDATE machine_keys SET last_used_at = $1 WHERE id = $2 AND (last_used_at IS NULL OR last_used_at <= $3)',
        [now, key.id, now - LAST_USED_STEP_MS],
      )
    // Never past the key's own end: its expiry, or its rotation's grace.
    const ends = [key.expiresAt, key.revokesAt].filter((t): t is number => t !== null)
    const ttl = Math.min(MACHINE_TOKEN_TTL_S, ...ends.map((t) => Math.floor((t - now) / 1000)))
    const access = await issue({ keyId: key.id, workspaceId: key.workspaceId, scopes }, ttl)
    return { access_token: access, token_type: 'Bearer', expires_in: ttl, scope: scopes.join(' ') }
  }
}
