import { and, count, eq, inArray, isNull, sql } from 'drizzle-orm'
import type { Core } from '../core'
import { type Conn, isUniqueViolation } from '../db/store'
import { randomToken, sha256Hex } from '../shared/crypto'
import { displayName } from '../shared/display-names'
import { appError } from '../shared/errors'
import { newId } from '../shared/ids'
import type { Extensions } from './engine/extension'
import { IDENTITY_ERRORS } from './error-codes'
import { PLATFORM } from './instances'
import { DEFAULT_LOGIN_POLICY, type LoginPolicy } from './login-policy'
import { accounts, accountTokens, oidcPayloads } from './schema'

/** An account row as stored (the users listing shows all of it). */
export type UserAccount = typeof accounts.$inferSelect
/**
 * What the plane and the dashboard's session need of an account: the row without the columns only
 * the users listing reads (status, invitation, last sign-in, IdP), so a session read joins no more.
 */
export type Account = Omit<UserAccount, 'status' | 'invitedAt' | 'lastSignInAt' | 'viaIdp'>
type AccountTokenPurpose = 'verify_email' | 'reset_password' | 'invite'

export const normalizeEmail = (email: string) => email.trim().toLowerCase()

/** Whether an account of the instance has this (normalised) address, read in the caller's transaction. */
export async function addressTaken(conn: Conn, instanceId: string, email: string): Promise<boolean> {
  const [taken] = await conn.db
    .select({ id: accounts.id })
    .from(accounts)
    .where(and(eq(accounts.instanceId, instanceId), eq(accounts.email, email)))
    .limit(1)
  return taken !== undefined
}
export const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

const PASSWORD_MAX = 256

/** What a new password must be: the rule every form that sets one enforces and shows by its field. */
export interface PasswordRule {
  minLength: number
  maxLength: number
}

/** The password rule of an instance's login policy (`password_min_length`). */
export const passwordRuleFor = (policy: Pick<LoginPolicy, 'passwordMinLength'>): PasswordRule => ({
  minLength: policy.passwordMinLength,
  maxLength: PASSWORD_MAX,
})

const DEFAULT_PASSWORD_RULE = passwordRuleFor(DEFAULT_LOGIN_POLICY)

/** Refuses (422) a new password that breaks the rule (sign-up, reset, invitation acceptance). */
export function checkPassword(password: string, rule: PasswordRule = DEFAULT_PASSWORD_RULE): void {
  if (password.length < rule.minLength)
    throw appError(IDENTITY_ERRORS.PASSWORD_TOO_SHORT, 422, {
      message: `Use at least ${rule.minLength} characters.`,
    })
  if (password.length > rule.maxLength) throw appError(IDENTITY_ERRORS.PASSWORD_TOO_LONG, 422)
}

export const hashPassword = (password: string) => Bun.password.hash(password, { algorithm: 'argon2id' })
// Verified against when no account matches, so a miss costs as long as a wrong password. Made when
// the identity plane starts (`preparePasswordChecks`), not on import: job workers load this module
// and never verify a password.
let dummyHash: Promise<string> | null = null
const dummy = () => {
  dummyHash ??= hashPassword('not-a-real-password-0000')
  return dummyHash
}
export const preparePasswordChecks = (): void => {
  dummy()
}

/** On the token and bearer paths; `conn` may be a transaction. */
export async function findAccount(
  conn: Pick<Core, 'db'>,
  instanceId: string,
  id: string,
): Promise<Account | undefined> {
  const [account] = await conn.db
    .select()
    .from(accounts)
    .where(and(eq(accounts.instanceId, instanceId), eq(accounts.id, id)))
    .limit(1)
  return account
}

export async function findAccountByEmail(
  core: Pick<Core, 'db'>,
  instanceId: string,
  email: string,
): Promise<UserAccount | undefined> {
  const [account] = await core.db
    .select()
    .from(accounts)
    .where(and(eq(accounts.instanceId, instanceId), eq(accounts.email, normalizeEmail(email))))
    .limit(1)
  return account
}

/** The accounts of an instance among `ids`, in no order (a workspace's members, by their platform accounts). */
export async function findAccounts(core: Core, instanceId: string, ids: string[]): Promise<UserAccount[]> {
  if (ids.length === 0) return []
  return core.db
    .select()
    .from(accounts)
    .where(and(eq(accounts.instanceId, instanceId), inArray(accounts.id, ids)))
}

const emailTaken = () => appError(IDENTITY_ERRORS.EMAIL_TAKEN, 409)

/**
 * Creates a password account. The first account of the platform instance is its administrator:
 * decided under a lock held until commit, so two nodes signing up at once cannot both be first.
 */
export async function signUp(
  core: Core,
  instanceId: string,
  input: { email: string; password: string; name?: string },
  rule: PasswordRule = DEFAULT_PASSWORD_RULE,
): Promise<Account> {
  const email = normalizeEmail(input.email)
  if (!EMAIL.test(email) || email.length > 320) throw appError(IDENTITY_ERRORS.EMAIL_INVALID, 422)
  checkPassword(input.password, rule)
  // A name is optional here; one that is given follows the rule every display name does.
  const given = (input.name ?? '').trim().slice(0, 200)
  const name = given ? displayName(given) : ''
  const passwordHash = await hashPassword(input.password)
  try {
    return await core.store.tx(async (tx) => {
      if (await addressTaken(tx, instanceId, email)) throw emailTaken()
      return insertAccount(tx, core, instanceId, { email, name, passwordHash })
    })
  } catch (e) {
    // Another sign-up with this address committed between the check and the insert.
    if (isUniqueViolation(e)) throw emailTaken()
    throw e
  }
}

/**
 * Writes a new active account in the caller's transaction: the platform's first account is its
 * administrator; a workspace instance's emits `user.created` (with the IdP it came from, if any).
 * The one way an account is born of a sign-up, with a password or through an external IdP.
 */
export async function insertAccount(
  tx: Conn,
  core: Core,
  instanceId: string,
  input: {
    email: string
    name: string
    passwordHash: string | null
    emailVerified?: boolean
    viaIdp?: string | null
  },
): Promise<Account> {
  const now = core.clock.now()
  let first = false
  if (instanceId === PLATFORM) {
    await tx.serialize('platform:first-account')
    const [row] = await tx.db.select({ n: count() }).from(accounts).where(eq(accounts.instanceId, PLATFORM))
    first = Number(row?.n ?? 0) === 0
  }
  const [account] = await tx.db
    .insert(accounts)
    .values({
      id: newId('usr', now),
      instanceId,
      email: input.email,
      emailVerified: input.emailVerified ?? false,
      name: input.name,
      passwordHash: input.passwordHash,
      isPlatformAdmin: first,
      viaIdp: input.viaIdp ?? null,
      createdAt: now,
      updatedAt: now,
    })
    .returning()
  if (!account) throw new Error('the account was not written')
  if (instanceId !== PLATFORM) {
    await core.emit('user.created', instanceId, userEventData(account), { tx })
  }
  return account
}

/** The account when the password matches; null otherwise (constant work either way). */
export async function verifyPassword(
  core: Core,
  instanceId: string,
  email: string,
  password: string,
): Promise<Account | null> {
  const account = await findAccountByEmail(core, instanceId, email)
  const ok = await Bun.password.verify(
    password.slice(0, PASSWORD_MAX),
    account?.passwordHash ?? (await dummy()),
  )
  return account?.passwordHash && ok ? account : null
}

/**
 * The `data` of a user.* or session.* event (SPEC "Events"): who, never a secret. `via_idp` is the
 * external provider the account came from, null for password accounts.
 */
export const userEventData = (
  account: Pick<Account, 'id' | 'name' | 'email'> & { viaIdp?: string | null },
) => ({
  user_id: account.id,
  name: account.name,
  email: account.email,
  via_idp: account.viaIdp ?? null,
})

/** A single-use mailed token; only its hash is stored. */
export async function issueAccountToken(
  core: Core,
  account: Account,
  purpose: AccountTokenPurpose,
  ttlMs: number,
  interactionUid?: string,
): Promise<string> {
  const token = randomToken(32)
  await core.db.insert(accountTokens).values({
    tokenHash: sha256Hex(token),
    instanceId: account.instanceId,
    accountId: account.id,
    purpose,
    interactionUid: interactionUid ?? null,
    expiresAt: core.clock.now() + ttlMs,
  })
  return token
}

/**
 * Consumes a mailed token: the account it belongs to, or null when unknown, used or expired (or,
 * given `interactionUid`, issued for another sign-in).
 */
export async function useAccountToken(
  core: Core,
  instanceId: string,
  token: string,
  purpose: AccountTokenPurpose,
  interactionUid?: string,
): Promise<Account | null> {
  const now = core.clock.now()
  return core.store.tx(async (tx) => {
    const [row] = await tx.db
      .update(accountTokens)
      .set({ usedAt: now })
      .where(
        and(
          eq(accountTokens.tokenHash, sha256Hex(token)),
          eq(accountTokens.instanceId, instanceId),
          eq(accountTokens.purpose, purpose),
          isNull(accountTokens.usedAt),
          interactionUid === undefined ? undefined : eq(accountTokens.interactionUid, interactionUid),
        ),
      )
      .returning()
    if (!row || row.expiresAt <= now) return null
    const [account] = await tx.db.select().from(accounts).where(eq(accounts.id, row.accountId)).limit(1)
    return account ?? null
  })
}

/**
 * Marks the address proved (a verification or reset link was followed). On a workspace instance the
 * change of this attribute is a `user.updated` event, once: only when it was not verified yet.
 */
export async function markEmailVerified(core: Core, account: Account): Promise<void> {
  await core.store.tx(async (tx) => {
    const [changed] = await tx.db
      .update(accounts)
      .set({ emailVerified: true, updatedAt: core.clock.now() })
      .where(
        and(
          eq(accounts.instanceId, account.instanceId),
          eq(accounts.id, account.id),
          eq(accounts.emailVerified, false),
        ),
      )
      .returning()
    if (changed && changed.instanceId !== PLATFORM)
      await core.emit('user.updated', changed.instanceId, userEventData(changed), { tx })
  })
}

/**
 * Ends everything an instance issued for an account, in the caller's transaction: its sessions (the
 * session cookie signs no one in silently any more), grants, codes, refresh tokens (invalid_grant)
 * and opaque access tokens. Every such `oidc_payloads` row names its account (`accountOf`).
 */
export async function revokeAccountPayloads(
  conn: Conn,
  instanceId: string,
  accountId: string,
): Promise<void> {
  await conn.db
    .delete(oidcPayloads)
    .where(and(eq(oidcPayloads.instanceId, instanceId), eq(oidcPayloads.accountId, accountId)))
}

/**
 * Signs an account out of its instance everywhere, in the caller's transaction (a password change,
 * an admin's MFA reset): what the instance issued goes (`revokeAccountPayloads`), and a new
 * `auth_epoch` voids what was decided under the old credentials without a lookup since: platform
 * access tokens (JWTs) and a sign-in waiting at its second step. A platform account's dashboard
 * sessions are the control plane's: the caller ends them too (the `sessions` source).
 */
export async function signOutEverywhere(conn: Conn, instanceId: string, accountId: string): Promise<void> {
  await conn.db
    .update(accounts)
    .set({ authEpoch: sql`${accounts.authEpoch} + 1` })
    .where(and(eq(accounts.instanceId, instanceId), eq(accounts.id, accountId)))
  await revokeAccountPayloads(conn, instanceId, accountId)
}

/**
 * The one way a password changes (a reset, and any later change). Whoever held the old one is
 * signed out everywhere (`signOutEverywhere`: the instance's sessions and tokens, so its refresh
 * tokens fail with invalid_grant, and platform access tokens issued before), its dashboard sessions
 * too (the `sessions` source). An invited account that chooses a password this way (a reset link) is
 * active from then on, as if it had accepted the invitation.
 */
export async function setPassword(
  core: Core,
  extensions: Pick<Extensions, 'sessions'>,
  account: Account,
  password: string,
  rule: PasswordRule = DEFAULT_PASSWORD_RULE,
): Promise<void> {
  checkPassword(password, rule)
  const passwordHash = await hashPassword(password)
  await core.store.tx(async (tx) => {
    const now = core.clock.now()
    const where = and(eq(accounts.instanceId, account.instanceId), eq(accounts.id, account.id))
    const [before] = await tx.db.select({ status: accounts.status }).from(accounts).where(where).limit(1)
    const [after] = await tx.db
      .update(accounts)
      .set({ passwordHash, status: 'active', updatedAt: now })
      .where(where)
      .returning()
    if (before?.status === 'invited' && after && after.instanceId !== PLATFORM)
      await core.emit('user.created', after.instanceId, userEventData(after), { tx })
    await signOutEverywhere(tx, account.instanceId, account.id)
    await extensions.sessions.end(tx, account.id)
    // Other reset links (and an invitation) mailed before this change would let whoever reads that
    // mail set it again.
    await tx.db
      .update(accountTokens)
      .set({ usedAt: now })
      .where(
        and(
          eq(accountTokens.accountId, account.id),
          inArray(accountTokens.purpose, ['reset_password', 'invite']),
          isNull(accountTokens.usedAt),
        ),
      )
  })
}
