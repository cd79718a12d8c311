import { eq } from 'drizzle-orm'
import { Secret, TOTP } from 'otpauth'
import QRCode from 'qrcode'
import type { Core } from '../../core'
import type { Conn } from '../../db/store'
import type { Account } from '../accounts'
import { accountTotp } from '../schema'

/** RFC 6238 with what every authenticator app reads from an otpauth:// URI: SHA-1, 6 digits, 30 s. */
const PERIOD = 30
const DIGITS = 6
/** Codes of the step before and after the current one pass too (clock drift, a code typed late). */
const WINDOW = 1

const sealContext = (accountId: string) => `totp:${accountId}`

const totpOf = (secretBase32: string, issuer: string, label: string) =>
  new TOTP({
    issuer,
    label,
    algorithm: 'SHA1',
    digits: DIGITS,
    period: PERIOD,
    secret: Secret.fromBase32(secretBase32),
  })

export interface TotpEnrolment {
  /** The secret in base32, for typing it in. */
  secret: string
  /** The otpauth:// URI the QR code holds. */
  uri: string
  /** The QR code as an SVG element, drawn here (no script, no external image). */
  qrSvg: string
}

/**
 * The secret an enrolment shows: the one already waiting for its first code (a reloaded page shows
 * the same QR code), else a new one (160 bits, RFC 4226 §4's recommendation). An account whose app
 * is confirmed gets none: its secret is never shown again.
 */
export async function startTotpEnrolment(
  core: Core,
  account: Account,
  issuer: string,
): Promise<TotpEnrolment | null> {
  const [row] = await core.db.select().from(accountTotp).where(eq(accountTotp.accountId, account.id)).limit(1)
  if (row?.confirmedAt) return null
  let secret: string
  if (row) {
    secret = core.secrets.open(row.secretSealed, sealContext(account.id))
  } else {
    secret = new Secret({ size: 20 }).base32
    await core.db
      .insert(accountTotp)
      .values({
        accountId: account.id,
        instanceId: account.instanceId,
        secretSealed: core.secrets.seal(secret, sealContext(account.id)),
        createdAt: core.clock.now(),
      })
      .onConflictDoNothing()
    // Another request created it first: show that one.
    const [stored] = await core.db
      .select()
      .from(accountTotp)
      .where(eq(accountTotp.accountId, account.id))
      .limit(1)
    if (!stored || stored.confirmedAt) return null
    secret = core.secrets.open(stored.secretSealed, sealContext(account.id))
  }
  const uri = totpOf(secret, issuer, account.email).toString()
  const qrSvg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2, width: 200 })
  return { secret, uri, qrSvg }
}

/**
 * Checks a code against the account's secret and, when it matches a step later than the last one
 * accepted, records that step in the same statement: of two requests carrying one code, on
 * however many nodes, one passes. `confirm` accepts the unconfirmed secret of an enrolment (and
 * confirms it); otherwise only a confirmed one counts.
 */
export async function useTotpCode(
  conn: Conn,
  core: Core,
  accountId: string,
  code: string,
  opts: { confirm: boolean },
): Promise<boolean> {
  if (!new RegExp(`^\\d{${DIGITS}}$`).test(code)) return false
  const [row] = await conn.db.select().from(accountTotp).where(eq(accountTotp.accountId, accountId)).limit(1)
  if (!row || Boolean(row.confirmedAt) === opts.confirm) return false
  const secret = core.secrets.open(row.secretSealed, sealContext(accountId))
  const now = core.clock.now()
  const delta = totpOf(secret, '', '').validate({ token: code, timestamp: now, window: WINDOW })
  if (delta === null) return false
  const step = Math.floor(now / 1000 / PERIOD) + delta
  const taken = await conn.query(
    `UPDATE account_totp SET last_used_step = $2, confirmed_at = COALESCE(confirmed_at, $3)
     WHERE account_id = $1 AND (last_used_step IS NULL OR last_used_step < $2) RETURNING account_id`,
    [accountId, step, now],
  )
  return taken.length > 0
}
