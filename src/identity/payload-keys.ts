import type { Core } from '../core'
import { deriveKey, keyedHash } from '../shared/crypto'

/**
 * Stored lookup keys start with this (HMAC-SHA256, subkey v1). oidc-provider's ids and user codes
 * never contain a dot, so a key without it is a raw id written before hashing (see `legacy-payloads.ts`).
 */
export const HASHED_PREFIX = 'h1.'

/**
 * Values oidc-provider needs back on a lookup that does not carry them, and that would work if
 * presented: sealed under the master key instead of dropped.
 */
const SEALED: Record<string, readonly string[]> = {
  // Found by its user code (RFC 8628 §3.3), then saved again under its own id, the device code.
  DeviceCode: ['jti'],
  // The device code an approval finishes (oidc-provider's device_resume).
  Interaction: ['deviceCode'],
}

type Payload = Record<string, unknown>

const str = (v: unknown): string | null => (typeof v === 'string' && v ? v : null)
const obj = (v: unknown): Payload | null => (v && typeof v === 'object' ? (v as Payload) : null)

/** The key of the lookup hashes: one for every instance (the instance is a column of the row). */
const hashKeys = new WeakMap<Core, Buffer>()
function hashKeyOf(core: Core): Buffer {
  let key = hashKeys.get(core)
  if (!key) {
    key = deriveKey(core.config.secretKey, 'oidc-payload-ids v1')
    hashKeys.set(core, key)
  }
  return key
}

/**
 * How oidc-provider's payloads are kept in `oidc_payloads` for one instance: under a keyed hash
 * of their id, with every value that would work if presented (the id itself as `jti`, a device
 * flow's `userCode`, the session id an interaction copies as `session.cookie`) dropped or sealed.
 * A copy of the table is then no set of working credentials. The adapter receives the id or the
 * user code on every lookup, so both come back from the caller, never from the store.
 */
export function payloadCodec(core: Core, instanceId: string) {
  const hashKey = hashKeyOf(core)
  const context = (model: string, field: string) => `oidc:${instanceId}:${model}:${field}`

  return {
    /** The stored form of an id or a user code. */
    key: (value: string) => `${HASHED_PREFIX}${keyedHash(hashKey, value)}`,

    /** The payload as stored. */
    store(model: string, payload: Payload): string {
      const { jti: _id, userCode: _userCode, ...rest } = payload
      const sealed: Record<string, string> = {}
      for (const field of SEALED[model] ?? []) {
        const value = str(payload[field])
        if (value) sealed[field] = core.secrets.seal(value, context(model, field))
        delete rest[field]
      }
      const session = obj(rest.session)
      if (model === 'Interaction' && session) {
        // oidc-provider copies the session id here and never reads it back.
        const { cookie: _cookie, ...kept } = session
        rest.session = kept
      }
      if (Object.keys(sealed).length > 0) rest._sealed = sealed
      return JSON.stringify(rest)
    },

    /** The payload as oidc-provider wrote it, given what it was looked up by. */
    restore(model: string, stored: string, by: { id?: string; userCode?: string }): Payload {
      const payload = JSON.parse(stored) as Payload
      const sealed = obj(payload._sealed) ?? {}
      delete payload._sealed
      for (const [field, value] of Object.entries(sealed)) {
        if (field === 'jti' && by.id) continue
        payload[field] = core.secrets.open(String(value), context(model, field))
      }
      if (by.id) payload.jti = by.id
      if (by.userCode) payload.userCode = by.userCode
      return payload
    },
  }
}

export type PayloadCodec = ReturnType<typeof payloadCodec>

/** The account a payload stands for: sessions, grants, codes and tokens, and a finished login. */
export function accountOf(payload: Payload): string | null {
  return (
    str(payload.accountId) ??
    str(obj(payload.session)?.accountId) ??
    str(obj(obj(payload.result)?.login)?.accountId)
  )
}
