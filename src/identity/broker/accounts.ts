import { and, eq } from 'drizzle-orm'
import type { Core } from '../../core'
import { type Conn, isUniqueViolation } from '../../db/store'
import { nameError } from '../../shared/display-names'
import { type Account, EMAIL, insertAccount, normalizeEmail } from '../accounts'
import type { ExternalIdp } from '../deps'
import type { LoginPolicy } from '../login-policy'
import { SIGNUPS_BLOCKED } from '../pages/components'
import { accountLinks, accounts } from '../schema'
import { acceptInvitationThroughIdp } from '../users'
import { BrokerRefused, type ExternalIdentity } from './model'

/** An IdP's identity to link to an account: its subject at that IdP. */
export interface IdentityLink {
  idpId: string
  subject: string
}

/**
 * The account a sign-in through an external IdP is for (DESIGN "IdPs"):
 * 1. the account already linked to the IdP's subject;
 * 2. else the account with the same address, only when the IdP asserts the address is verified (an
 *    unverified claim is how an account would be taken over): linked now when an admin trusts the
 *    IdP's addresses (`trust_email`), else `proveAccount`: the user signs in to that account with
 *    its own credentials first (pages/link-account.tsx), since whoever runs the IdP can assert any
 *    address;
 * 3. else a new account, just in time, with `via_idp` the IdP's name, when the policy lets people
 *    sign up and the workspace takes new users (its monthly active users are within its limit).
 * Anything else is refused with a page that says why.
 */
export async function accountForIdentity(
  core: Core,
  instanceId: string,
  idp: ExternalIdp,
  who: ExternalIdentity,
  policy: Pick<LoginPolicy, 'allowRegistration'>,
  /** Whether the workspace takes no new users now (its sign-up checks); asked only for a new one. */
  signupsBlocked: () => Promise<boolean> = async () => false,
  retried = false,
): Promise<{ account: Account; created: boolean; proveAccount?: true }> {
  const [linked] = await core.db
    .select({ account: accounts })
    .from(accountLinks)
    .innerJoin(accounts, eq(accounts.id, accountLinks.accountId))
    .where(
      and(
        eq(accountLinks.instanceId, instanceId),
        eq(accountLinks.idpId, idp.id),
        eq(accountLinks.subject, who.subject),
      ),
    )
    .limit(1)
  if (linked) return { account: linked.account, created: false }

  const email = who.email === null ? '' : normalizeEmail(who.email)
  if (!EMAIL.test(email) || email.length > 320)
    throw new BrokerRefused(
      `${idp.name} did not share a usable email address, which this sign-in needs.`,
      403,
    )
  const now = core.clock.now()
  // Asked before the transaction (it reads other rows): a sign-in that may create an account.
  const blocked = await signupsBlocked()
  try {
    return await core.store.tx(async (tx) => {
      const link = { instanceId, idpId: idp.id, subject: who.subject, createdAt: now }
      const [existing] = await tx.db
        .select()
        .from(accounts)
        .where(and(eq(accounts.instanceId, instanceId), eq(accounts.email, email)))
        .limit(1)
      if (existing) {
        const inUse = new BrokerRefused(
          `The email address ${email} is already used by another account here. Sign in with that account (and verify its address) first.`,
          409,
        )
        // Linked only when both sides proved the address: the IdP asserts it verified, and the
        // account proved it too (or holds an open invitation to it). An unproved account may be
        // anyone's: linking it would share it with whoever signed up with that address first.
        if (!who.emailVerified) throw inUse
        if (existing.status === 'invited') {
          // The invitation went to the mailbox: an IdP no admin trusts does not accept it for its owner.
          if (!idp.trustEmail)
            throw new BrokerRefused(
              `An invitation to ${email} is waiting: accept it from the invitation email first, then sign in with ${idp.name} again.`,
              409,
            )
          const invited = await acceptInvitationThroughIdp(tx, core, existing.id, idp.name)
          if (!invited) throw new BrokerRefused('Your invitation has expired. Ask for a new one.', 403)
          await tx.db.insert(accountLinks).values({ ...link, accountId: existing.id })
          return { account: invited, created: true }
        }
        if (!existing.emailVerified) throw inUse
        if (!idp.trustEmail) return { account: existing, created: false, proveAccount: true as const }
        await tx.db.insert(accountLinks).values({ ...link, accountId: existing.id })
        return { account: existing, created: false }
      }
      if (!policy.allowRegistration)
        throw new BrokerRefused(
          'New accounts cannot be created here. Ask an administrator for an invitation.',
          403,
        )
      if (blocked) throw new BrokerRefused(SIGNUPS_BLOCKED, 403)
      // A name the IdP sends that no form would take (control characters, …) is left out.
      const given = Array.from(who.name.trim()).slice(0, 200).join('')
      const account = await insertAccount(tx, core, instanceId, {
        email,
        name: given && !nameError(given) ? given : '',
        passwordHash: null,
        emailVerified: who.emailVerified,
        viaIdp: idp.name,
      })
      await tx.db.insert(accountLinks).values({ ...link, accountId: account.id })
      return { account, created: true }
    })
  } catch (e) {
    // The same person signing in twice at once: the other attempt linked or created the account.
    if (isUniqueViolation(e) && !retried)
      return accountForIdentity(core, instanceId, idp, who, policy, signupsBlocked, true)
    throw e
  }
}

/**
 * Links an IdP's identity to the account whose owner just proved it (pages/link-account.tsx). A
 * subject linked meanwhile (the same person twice at once) keeps its link.
 */
export async function linkIdentity(core: Core, instanceId: string, accountId: string, link: IdentityLink) {
  await core.db
    .insert(accountLinks)
    .values({ instanceId, ...link, accountId, createdAt: core.clock.now() })
    .onConflictDoNothing()
}

/** Forgets the accounts' links to an IdP that is gone (its id is never used again), on `conn`. */
export async function deleteIdpLinks(conn: Conn, instanceId: string, idpId: string): Promise<void> {
  await conn.db
    .delete(accountLinks)
    .where(and(eq(accountLinks.instanceId, instanceId), eq(accountLinks.idpId, idpId)))
}
