import { and, eq } from 'drizzle-orm'
import type { Core } from '../../core'
import { type Conn, isUniqueViolation } from '../../db/store'
import { displayName } from '../../shared/names'
import { type Account, EMAIL, insertAccount, normalizeEmail } from '../accounts'
import type { ExternalIdp } from '../deps'
import type { LoginPolicy } from '../policy'
import { accountLinks, accounts } from '../schema'
import { BrokerRefused, type ExternalIdentity } from './model'

/**
 * The account a sign-in through an external IdP is for (DESIGN "IdPs"):
 * 1. the account already linked to the IdP's subject;
 * 2. else the account with the same address, linked now, only when the IdP asserts the address is
 *    verified (an unverified claim is how an account would be taken over);
 * 3. else a new account, just in time, with `via_idp` the IdP's name, when the policy lets people
 *    sign up.
 * Anything else is refused with a page that says why.
 */
export async function accountForIdentity(
  core: Core,
  instanceId: string,
  idp: ExternalIdp,
  who: ExternalIdentity,
  policy: Pick<LoginPolicy, 'allowRegistration'>,
  retried = false,
): Promise<{ account: Account; created: boolean }> {
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
  try {
    return await core.store.tx(async (tx) => {
      const link = { instanceId, idpId: idp.id, subject: who.subject, createdAt: now }
      const [existing] = await tx.db
        .select()
        .from(accounts)
        .where(and(eq(accounts.instanceId, instanceId), eq(accounts.email, email)))
        .limit(1)
      if (existing) {
        if (!who.emailVerified)
          throw new BrokerRefused(
            `The email address ${email} is already in use by another account. Sign in with that account, or ask ${idp.name} to verify your address.`,
            409,
          )
        // The IdP proved the address: the account's own check is done, and an invitation accepted.
        const [account] = await tx.db
          .update(accounts)
          .set({ emailVerified: true, status: 'active', updatedAt: now })
          .where(eq(accounts.id, existing.id))
          .returning()
        await tx.db.insert(accountLinks).values({ ...link, accountId: existing.id })
        return { account: account!, created: false }
      }
      if (!policy.allowRegistration)
        throw new BrokerRefused(
          'New accounts cannot be created here. Ask an administrator for an invitation.',
          403,
        )
      const given = who.name.trim().slice(0, 200)
      const account = await insertAccount(tx, core, instanceId, {
        email,
        name: given ? displayName(given) : '',
        passwordHash: null,
        emailVerified: who.emailVerified,
        viaIdp: idp.name,
      })
      await tx.db.insert(accountLinks).values({ ...link, accountId: account.id })
      return { account, created: true }
    })
  } catch (e) {
    // The same person signing in twice at once: the other attempt linked or created the account.
    if (isUniqueViolation(e) && !retried) return accountForIdentity(core, instanceId, idp, who, policy, true)
    throw e
  }
}

/** Forgets the accounts' links to an IdP that is gone (its id is never used again), on `conn`. */
export async function deleteIdpLinks(conn: Conn, instanceId: string, idpId: string): Promise<void> {
  await conn.db
    .delete(accountLinks)
    .where(and(eq(accountLinks.instanceId, instanceId), eq(accountLinks.idpId, idpId)))
}
