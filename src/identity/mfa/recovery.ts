import { randomBytes } from 'node:crypto'
import { and, eq, isNull } from 'drizzle-orm'
import type { Core } from '../../core'
import type { Conn } from '../../db/store'
import { deriveKey, keyedHash } from '../../shared/crypto'
import { accountRecoveryCodes } from '../schema'

const RECOVERY_CODE_COUNT = 10
/** Lower-case base32 without look-alikes' confusion: RFC 4648's alphabet, read case-insensitively. */
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567'

/** Two groups of five (50 bits): `k7rq2-mx4ta`. */
function newCode(): string {
  const bytes = randomBytes(10)
  const chars = [...bytes].map((b) => ALPHABET[b & 31]).join('')
  return `${chars.slice(0, 5)}-${chars.slice(5)}`
}

/** How a typed code is compared: case, spaces and dashes do not matter. */
const normalizeRecoveryCode = (code: string) => code.toLowerCase().replace(/[^a-z2-7]/g, '')

/**
 * A keyed hash (HMAC-SHA256 under a subkey of the master key) of the account and the code: the
 * table's copy neither opens an account nor lets codes be guessed offline.
 */
const hashOf = (core: Core, accountId: string, code: string) =>
  keyedHash(
    deriveKey(core.config.secretKey, 'mfa recovery codes'),
    `${accountId}:${normalizeRecoveryCode(code)}`,
  )

/** Replaces the account's recovery codes with ten new ones; the codes are returned once, never stored. */
export async function issueRecoveryCodes(
  conn: Conn,
  core: Core,
  account: { id: string; instanceId: string },
): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newCode)
  const now = core.clock.now()
  await conn.db.delete(accountRecoveryCodes).where(eq(accountRecoveryCodes.accountId, account.id))
  await conn.db.insert(accountRecoveryCodes).values(
    codes.map((code) => ({
      codeHash: hashOf(core, account.id, code),
      accountId: account.id,
      instanceId: account.instanceId,
      createdAt: now,
    })),
  )
  return codes
}

/** Spends a recovery code: true once per code, in one statement (two requests with it: one passes). */
export async function useRecoveryCode(
  conn: Conn,
  core: Core,
  accountId: string,
  code: string,
): Promise<boolean> {
  if (normalizeRecoveryCode(code).length !== 10) return false
  const [row] = await conn.db
    .update(accountRecoveryCodes)
    .set({ usedAt: core.clock.now() })
    .where(
      and(
        eq(accountRecoveryCodes.codeHash, hashOf(core, accountId, code)),
        eq(accountRecoveryCodes.accountId, accountId),
        isNull(accountRecoveryCodes.usedAt),
      ),
    )
    .returning({ hash: accountRecoveryCodes.codeHash })
  return Boolean(row)
}
