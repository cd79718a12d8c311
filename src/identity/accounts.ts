import { and, count, eq, isNull, sql } from 'drizzle-orm'
import type { Core } from '../core'
import { preparedFor } from '../db/prepared'
import { randomToken, sha256Hex } from '../shared/crypto'
import { AppError } from '../shared/errors'
import { newId } from '../shared/ids'
import { displayName } from '../shared/names'
import type { IdentityDeps } from './deps'
import { PLATFORM } from './instances'
import { accounts, accountTokens, oidcPayloads } from './schema'

export type Account = typeof accounts.$inferSelect
export type AccountTokenPurpose = 'verify_email' | 'reset_password'

export const normalizeEmail = (email: string) => email.trim().toLowerCase()
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export const PASSWORD_MIN = 8
const PASSWORD_MAX = 256

export function checkPassword(password: string): void {
  if (password.length < PASSWORD_MIN)
    throw new AppError('PASSWORD_TOO_SHORT', 422, `Use at least ${PASSWORD_MIN} characters.`)
  if (password.length > PASSWORD_MAX)
    throw new AppError('PASSWORD_TOO_LONG', 422, 'That password is too long.')
}

const hashPassword = (password: string) => Bun.password.hash(password, { algorithm: 'argon2id' })
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

const queries = preparedFor((db) => ({
  byId: db
    .select()
    .from(accounts)
    .where(
      and(eq(accounts.instanceId, sql.placeholder('instanceId')), eq(accounts.id, sql.placeholder('id'))),
    )
    .prepare(),
}))

/** On the token and bearer paths, so prepared once per connection. */
export function findAccount(core: Core, instanceId: string, id: string): Account | undefined {
  return queries(core.db).byId.get({ instanceId, id })
}

export function findAccountByEmail(core: Core, instanceId: string, email: string): Account | undefined {
  return core.db
    .select()
    .from(accounts)
    .where(and(eq(accounts.instanceId, instanceId), eq(accounts.email, normalizeEmail(email))))
    .get()
}

/** Creates a password account. The first account of the platform instance is its administrator. */
export async function signUp(
  core: Core,
  instanceId: string,
  input: { email: string; password: string; name?: string },
): Promise<Account> {
  const email = normalizeEmail(input.email)
  if (!EMAIL.test(email) || email.length > 320)
    throw new AppError('EMAIL_INVALID', 422, 'Enter a valid email address.')
  checkPassword(input.password)
  // A name is optional here; one that is given follows the rule every display name does.
  const given = (input.name ?? '').trim().slice(0, 200)
  const name = given ? displayName(given) : ''
  const passwordHash = await hashPassword(input.password)
  const now = core.clock.now()
  return core.db.transaction((tx) => {
    const taken = tx
      .select({ id: accounts.id })
      .from(accounts)
      .where(and(eq(accounts.instanceId, instanceId), eq(accounts.email, email)))
      .get()
    if (taken)
      throw new AppError('EMAIL_TAKEN', 409, 'An account with this email already exists. Sign in instead.')
    const first =
      instanceId === PLATFORM &&
      (tx.select({ n: count() }).from(accounts).where(eq(accounts.instanceId, PLATFORM)).get()?.n ?? 0) === 0
    const account = tx
      .insert(accounts)
      .values({
        id: newId('usr', now),
        instanceId,
        email,
        name,
        passwordHash,
        isPlatformAdmin: first,
        createdAt: now,
        updatedAt: now,
      })
      .returning()
      .get()
    if (instanceId !== PLATFORM) {
      core.emit('user.created', instanceId, { user_id: account.id, name, email, via_idp: 'password' }, { tx })
    }
    return account
  })
}

/** The account when the password matches; null otherwise (constant work either way). */
export async function verifyPassword(
  core: Core,
  instanceId: string,
  email: string,
  password: string,
): Promise<Account | null> {
  const account = findAccountByEmail(core, instanceId, email)
  const ok = await Bun.password.verify(
    password.slice(0, PASSWORD_MAX),
    account?.passwordHash ?? (await dummy()),
  )
  return account?.passwordHash && ok ? account : null
}

/** A single-use mailed token; only its hash is stored. */
export function issueAccountToken(
  core: Core,
  account: Account,
  purpose: AccountTokenPurpose,
  ttlMs: number,
  interactionUid?: string,
): string {
  const token = randomToken(32)
  core.db
    .insert(accountTokens)
    .values({
      tokenHash: sha256Hex(token),
      instanceId: account.instanceId,
      accountId: account.id,
      purpose,
      interactionUid: interactionUid ?? null,
      expiresAt: core.clock.now() + ttlMs,
    })
    .run()
  return token
}

/** Consumes a mailed token: the account it belongs to, or null when unknown, used or expired. */
export function useAccountToken(
  core: Core,
  instanceId: string,
  token: string,
  purpose: AccountTokenPurpose,
): Account | null {
  const now = core.clock.now()
  return core.db.transaction((tx) => {
    const row = tx
      .update(accountTokens)
      .set({ usedAt: now })
      .where(
        and(
          eq(accountTokens.tokenHash, sha256Hex(token)),
          eq(accountTokens.instanceId, instanceId),
          eq(accountTokens.purpose, purpose),
          isNull(accountTokens.usedAt),
        ),
      )
      .returning()
      .get()
    if (!row || row.expiresAt <= now) return null
    return tx.select().from(accounts).where(eq(accounts.id, row.accountId)).get() ?? null
  })
}

export function markEmailVerified(core: Core, account: Account): void {
  core.db
    .update(accounts)
    .set({ emailVerified: true, updatedAt: core.clock.now() })
    .where(and(eq(accounts.instanceId, account.instanceId), eq(accounts.id, account.id)))
    .run()
}

/**
 * The one way a password changes (a reset, and any later change). Whoever held the old one is
 * signed out everywhere: the instance's sessions, grants, codes and tokens of the account (so its
 * refresh tokens fail with invalid_grant), its dashboard sessions (`endAccountSessions`), and the
 * new `auth_epoch` makes platform access tokens issued before stop working on the control plane
 * (they are JWTs verified without a lookup).
 */
export async function setPassword(
  core: Core,
  deps: Pick<IdentityDeps, 'endAccountSessions'>,
  account: Account,
  password: string,
): Promise<void> {
  checkPassword(password)
  const passwordHash = await hashPassword(password)
  core.db.transaction((tx) => {
    tx.update(accounts)
      .set({ passwordHash, authEpoch: sql`${accounts.authEpoch} + 1`, updatedAt: core.clock.now() })
      .where(and(eq(accounts.instanceId, account.instanceId), eq(accounts.id, account.id)))
      .run()
    tx.delete(oidcPayloads)
      .where(and(eq(oidcPayloads.instanceId, account.instanceId), eq(oidcPayloads.accountId, account.id)))
      .run()
    deps.endAccountSessions(tx, account.id)
    // Other reset links mailed before this change would let whoever reads that mail reset it again.
    tx.update(accountTokens)
      .set({ usedAt: core.clock.now() })
      .where(
        and(
          eq(accountTokens.accountId, account.id),
          eq(accountTokens.purpose, 'reset_password'),
          isNull(accountTokens.usedAt),
        ),
      )
      .run()
  })
}
