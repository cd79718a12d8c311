import { and, asc, count, eq, gt, isNull, or, type SQL, sql } from 'drizzle-orm'
import type { Core } from '../core'
import type { Conn } from '../db/store'
import { isUniqueViolation } from '../db/store'
import { randomToken, sha256Hex } from '../shared/crypto'
import { displayName } from '../shared/display-names'
import { newId } from '../shared/ids'
import { likePrefix } from '../shared/pagination'
import {
  type Account,
  addressTaken,
  checkPassword,
  hashPassword,
  normalizeEmail,
  type PasswordRule,
  revokeAccountPayloads,
  type UserAccount,
  userEventData,
} from './accounts'
import { issuerFor, PLATFORM } from './instances'
import { accounts, accountTokens } from './schema'

// The users of a workspace instance as its admins manage them (the users feature, through
// index.ts): listing, invitations and deletion. Every function is scoped by `instanceId`.

/** How long an invitation link works (DESIGN "Users": 7 days). */
export const INVITE_TTL_MS = 7 * 24 * 3600_000
/** How long an email verification link works. */
export const VERIFY_TTL_MS = 24 * 3600_000

export interface AccountPage {
  items: UserAccount[]
  /** Accounts matching `q`, all pages together. */
  total: number
  /** Whether accounts follow the last one of `items`. */
  more: boolean
}

/**
 * A page of an instance's accounts in creation order (ids are time-ordered ULIDs), those after the
 * account `after`; `q` keeps the accounts whose email or name starts with it, in any case.
 */
export async function listAccounts(
  core: Core,
  instanceId: string,
  opts: { limit: number; after?: string | null; q?: string | null },
): Promise<AccountPage> {
  const filters: SQL[] = [eq(accounts.instanceId, instanceId)]
  const q = opts.q?.trim()
  if (q) {
    const pattern = likePrefix(q)
    const match = or(
      sql`${accounts.email} LIKE ${pattern} ESCAPE '\\'`,
      sql`lower(${accounts.name}) LIKE ${pattern} ESCAPE '\\'`,
    )
    if (match) filters.push(match)
  }
  const [counted] = await core.db
    .select({ n: count() })
    .from(accounts)
    .where(and(...filters))
  if (opts.after) filters.push(gt(accounts.id, opts.after))
  const rows = await core.db
    .select()
    .from(accounts)
    .where(and(...filters))
    .orderBy(asc(accounts.id))
    .limit(opts.limit + 1)
  return { items: rows.slice(0, opts.limit), total: Number(counted?.n ?? 0), more: rows.length > opts.limit }
}

export interface Invitation {
  account: UserAccount
  /** The acceptance page with the single-use token: only ever in the mail. */
  link: string
  expiresAt: number
}

/**
 * Creates an invited account (no password, so no sign-in until accepted) and its single-use
 * invitation token (stored hashed, 7 days). `deliver` runs in the same transaction, so the mail it
 * queues exists exactly when the invitation does. Null when the address already has an account.
 */
export async function inviteAccount(
  core: Core,
  instanceId: string,
  input: { email: string; name?: string },
  deliver: (tx: Conn, invitation: Invitation) => Promise<unknown>,
): Promise<Invitation | null> {
  if (instanceId === PLATFORM) throw new Error('the platform instance has no invitations')
  const email = normalizeEmail(input.email)
  const given = (input.name ?? '').trim()
  const name = given ? displayName(given) : ''
  const now = core.clock.now()
  const token = randomToken(32)
  const expiresAt = now + INVITE_TTL_MS
  try {
    return await core.store.tx(async (tx) => {
      if (await addressTaken(tx, instanceId, email)) return null
      const [account] = await tx.db
        .insert(accounts)
        .values({
          id: newId('usr', now),
          instanceId,
          email,
          name,
          passwordHash: null,
          status: 'invited',
          invitedAt: now,
          createdAt: now,
          updatedAt: now,
        })
        .returning()
      if (!account) throw new Error('the account was not written')
      await tx.db.insert(accountTokens).values({
        tokenHash: sha256Hex(token),
        instanceId,
        accountId: account.id,
        purpose: 'invite',
        expiresAt,
      })
      const link = `${issuerFor(core.config, instanceId)}/accept-invite?token=${encodeURIComponent(token)}`
      const invitation = { account, link, expiresAt }
      await deliver(tx, invitation)
      return invitation
    })
  } catch (e) {
    // Another invitation or sign-up with this address committed between the check and the insert.
    if (isUniqueViolation(e)) return null
    throw e
  }
}

const openInvite = (instanceId: string, token: string) =>
  and(
    eq(accountTokens.tokenHash, sha256Hex(token)),
    eq(accountTokens.instanceId, instanceId),
    eq(accountTokens.purpose, 'invite'),
    isNull(accountTokens.usedAt),
  )

/** The invited account a token opens, without using it (the acceptance form); null when it opens none. */
export async function findInvitation(
  core: Core,
  instanceId: string,
  token: string,
): Promise<UserAccount | null> {
  if (!token) return null
  const [row] = await core.db.select().from(accountTokens).where(openInvite(instanceId, token)).limit(1)
  if (!row || row.expiresAt <= core.clock.now()) return null
  const [account] = await core.db.select().from(accounts).where(eq(accounts.id, row.accountId)).limit(1)
  return account?.status === 'invited' ? account : null
}

/**
 * Accepts an invitation through an external IdP that proved the address, in the caller's
 * transaction: the open token is used up (one that expired opens nothing), the account activated
 * with its address proved, and `user.created` emitted with the IdP. Null when no open token is left.
 */
export async function acceptInvitationThroughIdp(
  tx: Conn,
  core: Core,
  accountId: string,
  viaIdp: string,
): Promise<UserAccount | null> {
  const now = core.clock.now()
  const [used] = await tx.db
    .update(accountTokens)
    .set({ usedAt: now })
    .where(
      and(
        eq(accountTokens.accountId, accountId),
        eq(accountTokens.purpose, 'invite'),
        isNull(accountTokens.usedAt),
        gt(accountTokens.expiresAt, now),
      ),
    )
    .returning()
  if (!used) return null
  const [account] = await tx.db
    .update(accounts)
    .set({ status: 'active', emailVerified: true, viaIdp, updatedAt: now })
    .where(and(eq(accounts.id, accountId), eq(accounts.status, 'invited')))
    .returning()
  if (!account) return null
  await core.emit('user.created', account.instanceId, userEventData(account), { tx })
  return account
}

/**
 * Accepts an invitation: uses the token up, sets the password, proves the address (the link came
 * by mail) and activates the account, which is then `user.created`, all in one transaction. Null
 * when the token is unknown, expired or already used. The password follows the instance's rule.
 */
export async function acceptInvitation(
  core: Core,
  instanceId: string,
  token: string,
  input: { password: string; name?: string },
  rule: PasswordRule,
): Promise<UserAccount | null> {
  checkPassword(input.password, rule)
  const given = (input.name ?? '').trim()
  const name = given ? displayName(given) : null
  const passwordHash = await hashPassword(input.password)
  const now = core.clock.now()
  return core.store.tx(async (tx) => {
    const [used] = await tx.db
      .update(accountTokens)
      .set({ usedAt: now })
      .where(openInvite(instanceId, token))
      .returning()
    if (!used || used.expiresAt <= now) return null
    const [account] = await tx.db
      .update(accounts)
      .set({
        passwordHash,
        status: 'active',
        emailVerified: true,
        ...(name ? { name } : {}),
        updatedAt: now,
      })
      .where(
        and(
          eq(accounts.instanceId, instanceId),
          eq(accounts.id, used.accountId),
          eq(accounts.status, 'invited'),
        ),
      )
      .returning()
    if (!account) return null
    await core.emit('user.created', instanceId, userEventData(account), { tx })
    return account
  })
}

/**
 * Deletes an account of a workspace instance at once: its sessions, grants, codes and tokens go
 * with it (a refresh token it held fails with invalid_grant from now on), then its mailed tokens
 * and the account itself, recorded as `user.deleted`. False when there was no such account.
 * `recorded` runs in the same transaction when an account was deleted: the caller's audit entry, and
 * what the control plane keeps of the user (their tenant memberships).
 */
export async function deleteAccount(
  core: Core,
  instanceId: string,
  accountId: string,
  recorded?: (tx: Conn, account: UserAccount) => Promise<unknown>,
): Promise<boolean> {
  if (instanceId === PLATFORM) throw new Error('platform accounts are not deleted here')
  return core.store.tx(async (tx) => {
    const [account] = await tx.db
      .delete(accounts)
      .where(and(eq(accounts.instanceId, instanceId), eq(accounts.id, accountId)))
      .returning()
    if (!account) return false
    await revokeAccountPayloads(tx, instanceId, accountId)
    await tx.db.delete(accountTokens).where(eq(accountTokens.accountId, accountId))
    await core.emit('user.deleted', instanceId, userEventData(account), { tx })
    await recorded?.(tx, account)
    return true
  })
}

/** The account's last sign-in, for the users listing (finishLogin). */
export async function recordSignIn(core: Core, account: Account): Promise<void> {
  await core.db
    .update(accounts)
    .set({ lastSignInAt: core.clock.now() })
    .where(and(eq(accounts.instanceId, account.instanceId), eq(accounts.id, account.id)))
}

/** What a fresh link of an account is for: accepting its invitation, or proving its address. */
export type AccountLinkPurpose = 'invite' | 'verify_email'

/** A link made by reissueAccountLink. */
export interface ReissuedLink {
  account: UserAccount
  purpose: AccountLinkPurpose
  link: string
  expiresAt: number
}

/**
 * A fresh single-use link of a workspace account whose mail went nowhere, to be handed over by
 * other means (the users feature decides who may ask): its invitation while it is `invited`, else
 * its email verification while its address is unproved. Tokens are stored hashed, so the link is
 * a new one, and the unused ones of that purpose stop working. `record` runs in the same
 * transaction (the audit entry). Null when the account is unknown or needs neither.
 */
export async function reissueAccountLink(
  core: Core,
  instanceId: string,
  accountId: string,
  record: (tx: Conn, account: UserAccount, purpose: AccountLinkPurpose) => Promise<unknown>,
): Promise<ReissuedLink | null> {
  if (instanceId === PLATFORM) throw new Error('the platform instance has no links to hand over')
  const token = randomToken(32)
  const now = core.clock.now()
  return core.store.tx(async (tx) => {
    const [account] = await tx.db
      .select()
      .from(accounts)
      .where(and(eq(accounts.instanceId, instanceId), eq(accounts.id, accountId)))
      .limit(1)
    const purpose: AccountLinkPurpose | null =
      account?.status === 'invited' ? 'invite' : account && !account.emailVerified ? 'verify_email' : null
    if (!account || !purpose) return null
    await tx.db
      .delete(accountTokens)
      .where(
        and(
          eq(accountTokens.accountId, account.id),
          eq(accountTokens.purpose, purpose),
          isNull(accountTokens.usedAt),
        ),
      )
    const expiresAt = now + (purpose === 'invite' ? INVITE_TTL_MS : VERIFY_TTL_MS)
    await tx.db
      .insert(accountTokens)
      .values({ tokenHash: sha256Hex(token), instanceId, accountId: account.id, purpose, expiresAt })
    await record(tx, account, purpose)
    const page = purpose === 'invite' ? 'accept-invite' : 'verify-email'
    const link = `${issuerFor(core.config, instanceId)}/${page}?token=${encodeURIComponent(token)}`
    return { account, purpose, link, expiresAt }
  })
}
